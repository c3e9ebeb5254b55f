"""The UI's typed refusal of a request parameter, shared by its builders."""


class BadRequest(ValueError):
    """A request parameter Storm's UI would refuse; answered with a 400."""
