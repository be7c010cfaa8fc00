"""The one exception hetlab raises for bad input (re-exported as `hetlab.HetlabError` and
`hetlab.api.HetlabError`); its own module so that the API's argument checks can raise it
without importing the API."""


class HetlabError(ValueError):
    """Bad input: the message names the thing and the fix."""
