"""Errors a user can fix: the CLI prints them as one line and exits with status 2."""


class UserError(Exception):
    """Bad input from the user: a name, a file or an option. The message says what and where."""


class InvalidDocument(UserError):
    """A results document failed validation; the message names the file and the field."""


class LeftOutOfCheckout(UserError):
    """A data file a sparse checkout left out (git tracks it, the work tree lacks it) was
    needed, and git could not give it. A publish then checks out the whole folder."""
