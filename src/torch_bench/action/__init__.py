"""The GitHub Action: inputs from the environment, then the stages in order."""
