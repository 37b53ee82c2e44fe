"""Keep secrets out of error messages and logs: the client's use of :mod:`threadcase.redaction`.

Error excerpts quote a response body so a failure can be diagnosed from the report alone; bodies can
echo what we sent (credential data, a password on a bad login) or carry tokens. The client's
:class:`Redactor` knows its password and the ``EVAL_*`` tokens; the run's redactor, which every output
passes through, knows every other configured secret too.
"""

from threadcase.redaction import REDACTED, Redactor, environment_secrets

__all__ = ["REDACTED", "Redactor", "environment_secrets"]
