"""What a file's name claims, checked against its content when its entry is written: the dates it states
(name_dates.py) and the grid it promises (name_fields.py).

These are render-time checks, not a profiler's: a profile is kept by content hash and shared by every copy of a
file, whatever its name.
"""

from __future__ import annotations

import dataclasses

from dslake_index.name_dates import SPAN_LABEL, card_term, content_span, file_note
from dslake_index.name_fields import axes_only_note
from dslake_index.profilers.base import Profile


def name_notes(path: str, profile: Profile) -> Profile:
    """Return the profile with notes (and card words) on what its file's name claims and the content lacks."""
    name = path.rsplit("/", 1)[-1]
    span = content_span(profile.tables, profile.time_span, profile.sampled, SPAN_LABEL.get(profile.format, "times"))
    dates = file_note(name, span)
    axes = axes_only_note(name, profile.structure)
    if not dates and not axes:
        return profile
    terms = ([card_term([(name, span)])] if dates else []) + (["axes only, no values on the grid"] if axes else [])
    return dataclasses.replace(profile, notes=[*dates, *axes, *profile.notes], keywords=[*terms, *profile.keywords])
