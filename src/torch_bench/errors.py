"""Errors a user can fix: the CLI prints them as one line and exits with status 2."""


class UserError(Exception):
    """Bad input from the user: a name, a file or an option. The message says what and where."""


class InvalidDocument(UserError):
    """A results document failed validation; the message names the file and the field."""
