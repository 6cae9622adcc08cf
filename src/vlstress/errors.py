"""One exception type for problems a user can fix (bad input, bad params, missing files)."""


class VlstressError(Exception):
    """A clear, user-facing error. The CLI prints it without a traceback and exits 2."""
