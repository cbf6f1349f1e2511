"""Read the read trace a script's Python wrote (see _readtrace.py), and say when it cannot be taken at its word.

The trace is written from inside the script's own interpreter: a script can add lines or close the channel, so
it is what the script's Python reported, not proof. What can be seen from outside is marked: a trace that did not
end with the script's exit (the channel closed early, or the script left through os._exit), lines that are not
absolute paths, and a trace so long its middle was cut.
"""

from __future__ import annotations

END = "\0end"  # the line _readtrace.py writes when the script's own interpreter exits
CLOSED = "the read trace did not end with the script (channel closed early, or os._exit)"
CUT = "the read trace passed its size limit; its middle was cut"


def read_trace(text: str, cut: bool, exited: bool) -> tuple[list[str], list[str]]:
    """Return the paths a trace reports and what is wrong with it (empty when nothing shows).

    cut: the capped buffer dropped the middle (its marker line is not a path). exited: the script ended by
    itself (not killed), so its interpreter had the chance to write the END line.
    """
    paths: list[str] = []
    malformed = 0
    ended = False
    lines = text.split("\n")
    if lines[-1]:
        malformed += 1  # an unfinished last line: no writer of whole lines leaves one
    for line in lines[:-1]:
        if line == END:
            ended = True
        elif line.startswith("/"):
            paths.append(line)
        elif not cut:  # a cut trace has the cut's marker and half lines on either side of it
            malformed += 1
    problems = []
    if exited and not ended:
        problems.append(CLOSED)
    if malformed:
        problems.append(f"the read trace carried {malformed} line{'s' if malformed != 1 else ''} that are not "
                        "absolute paths (written by the script itself)")
    if cut:
        problems.append(CUT)
    return paths, problems
