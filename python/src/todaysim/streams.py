"""Server-Sent Events as the client reads them: a session's or an account's timeline entries as
they are recorded (`Client.session_events`, `Client.account_events`)."""
from __future__ import annotations

import json
from typing import Any, Iterator, Mapping, Optional, cast

import httpx

from . import models as m
from .transport import TodaysimError

__all__ = ["StreamEvent", "read_events"]


class StreamEvent(dict[str, Any]):
    """One Server-Sent Event: `id`, `event` (the entry's kind) and `data` (the entry, parsed)."""

    @property
    def entry(self) -> m.TimelineEntry:
        return cast(m.TimelineEntry, self["data"])


def read_events(http: httpx.Client, path: str, params: Mapping[str, Any], last_event_id: Optional[str]) -> Iterator[StreamEvent]:
    """The events of the stream at `path`, read as they come (no read deadline), resumed after
    `last_event_id` when given; a refusal or a broken stream raised as `TodaysimError`."""
    headers = {"Accept": "text/event-stream", **({"Last-Event-ID": last_event_id} if last_event_id else {})}
    try:
        with http.stream("GET", path, params={k: v for k, v in params.items() if v is not None}, headers=headers,
                         timeout=httpx.Timeout(http.timeout.connect, read=None)) as response:
            if response.status_code != 200:
                response.read()
                raise TodaysimError.of_answer(response, f"GET {path}")
            event: dict[str, str] = {}
            for line in response.iter_lines():
                if not line:
                    if "data" in event:
                        yield StreamEvent(id=event.get("id"), event=event.get("event", "message"), data=json.loads(event["data"]))
                    event = {}
                elif line.startswith(":"):
                    continue
                else:
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    event[name] = event["data"] + "\n" + value if name == "data" and "data" in event else value
    except httpx.TransportError as error:
        raise TodaysimError.unreachable(error, f"the event stream {path} broke", f"GET {path}") from None
