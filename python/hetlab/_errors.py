"""The one exception hetlab raises for bad input (re-exported as `hetlab.HetlabError` and
`hetlab.api.HetlabError`); its own module so that the API's argument checks can raise it
without importing the API."""


def printable(text: str) -> str:
    """`text` with every character that is not printable (a newline, a record separator a
    user's value brought in) shown escaped: a message stays one line wherever it is shown."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


class HetlabError(ValueError):
    """Bad input: the message names the thing and the fix, on one line."""

    def __init__(self, message: object = "", *args: object):
        super().__init__(printable(str(message)), *args)
