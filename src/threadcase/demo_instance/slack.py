"""n8n 2.41's Slack node (``n8n-nodes-base.slack``, typeVersion 2.2): where its channel lives.

n8n's build tool refuses a Slack v2.2 node with a flat ``channel`` ("``parameters.select`` must be
``channel``"): the node names its channel in a resource locator next to ``select: "channel"``,
``channelId: {__rl: true, value: "#x", mode: "name"}`` (``docs/n8n-local.md``, item 22). The builder
writes that shape; the builder and mocked execution read a channel only through :func:`slack_channel`,
which also reads the flat ``channel`` that older demo workflows and hand-written seeds carry.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SLACK_TYPE", "channel_locator", "post_parameters", "set_slack_channel", "slack_channel", "write_parameters"]

SLACK_TYPE = "n8n-nodes-base.slack"


def channel_locator(channel: str) -> dict[str, Any]:
    """The resource locator naming ``channel`` (``#name``) by name."""
    return {"__rl": True, "value": channel, "mode": "name"}


def post_parameters(channel: str, text: str) -> dict[str, Any]:
    """A "post a message" node's parameters as n8n's build tool accepts them (the n8n suite's scripted
    builds, ``cases/n8n/model/script.json``): ``resource``/``operation`` default to message/post."""
    return {"select": "channel", "channelId": channel_locator(channel), "text": text, "otherOptions": {}}


def slack_channel(parameters: dict[str, Any]) -> Any:
    """The node's channel: the locator's value, else a flat ``channel`` (``None`` when it has neither)."""
    locator = parameters.get("channelId")
    if isinstance(locator, dict):
        return locator.get("value")
    return parameters.get("channel")


def set_slack_channel(parameters: dict[str, Any], channel: str) -> None:
    """Point the node at ``channel`` in n8n's shape, in place; a flat ``channel`` is replaced, since n8n's
    build tool refuses an edit that keeps it."""
    parameters.pop("channel", None)
    parameters["select"] = "channel"
    parameters["channelId"] = channel_locator(channel)


def write_parameters(node: dict[str, Any], params: dict[str, Any]) -> None:
    """Write ``params`` into ``node``'s parameters; on a Slack node a channel given as ``channel`` or
    ``channelId`` (a name or a locator) goes into its locator (:func:`set_slack_channel`)."""
    params = dict(params)
    if node.get("type") == SLACK_TYPE:
        for key in ("channel", "channelId"):
            value = params.pop(key, None)
            if isinstance(value, dict):
                value = value.get("value")
            if isinstance(value, str) and value:
                set_slack_channel(node["parameters"], value)
    node["parameters"].update(params)
