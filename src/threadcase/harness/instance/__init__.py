"""The client for the system under test (n8n Instance AI REST API): calls, event stream, retries."""

from threadcase.harness.instance.client import InstanceClient
from threadcase.harness.instance.lanes import open_lanes
from threadcase.harness.instance.models import ClientTimeouts, Project
from threadcase.harness.instance.redact import Redactor
from threadcase.harness.instance.retry import CallKind, RetryPolicy
from threadcase.harness.instance.sse import EventSubscription

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
