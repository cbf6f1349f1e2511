"""One event stream per run: the loop emits each event once, under one name, and whoever cares subscribes.

The run record writes the events to trace.jsonl; the live display (ask's status line) and a report's table of
sub-questions follow the run through the progress callback they gave. An event is a name and its data, the
same for every subscriber.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from dslake_index.progress import Progress

if TYPE_CHECKING:
    from dsstar_lake.runs.record import RunRecord

# Events that say how far a run is, not what it did or decided: the live display wants them; trace.jsonl has the
# model call, the script and its outcome for each already, so the record leaves them out.
PROGRESS_ONLY = frozenset({"role", "exec_start", "round", "finalize"})


class EventStream:
    """Deliver each event to every subscriber, in the order they subscribed."""

    def __init__(self, subscribers: Iterable[Progress] = ()) -> None:
        self._subscribers = list(subscribers)

    def subscribe(self, subscriber: Progress) -> None:
        """Add a subscriber: it gets (event name, data) for every later event."""
        self._subscribers.append(subscriber)

    def emit(self, event: str, **data: Any) -> None:
        """Tell every subscriber that `event` happened, with its data."""
        for subscriber in self._subscribers:
            subscriber(event, data)


def recorder(record: RunRecord) -> Progress:
    """Return the run record's subscriber: every event but the progress-only ones, appended to trace.jsonl."""

    def write(event: str, data: dict[str, Any]) -> None:
        if event not in PROGRESS_ONLY:
            record.event(event, **data)

    return write
