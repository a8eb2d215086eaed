"""The data branch: where run documents are kept, how they are appended and read back."""
