"""The client for the system under test (n8n Instance AI REST API): calls, event stream, retries."""

from threadcase.instance.client import InstanceClient
from threadcase.instance.lanes import open_lanes
from threadcase.instance.models import ClientTimeouts, Project
from threadcase.instance.redact import Redactor
from threadcase.instance.retry import CallKind, RetryPolicy
from threadcase.instance.sse import EventSubscription

__all__ = [
    "CallKind",
    "ClientTimeouts",
    "EventSubscription",
    "InstanceClient",
    "Project",
    "Redactor",
    "RetryPolicy",
    "open_lanes",
]
