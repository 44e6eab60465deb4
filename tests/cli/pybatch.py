"""pybatch.py - many commands of a reference script in one process.

A reference script's `batch` command calls run(main): each line of standard
input is "ID COMMAND ARGS..." (words without spaces), run as main's argv
would be; for each, one line "ID STATUS TEXT" is printed, TEXT being what
the command printed, its lines joined with " / ". The interpreter's start
(and numpy's import) costs more than most single checks.
"""
import contextlib
import io
import sys


def run(main, script):
    """Runs main(argv) for every line of stdin; 0."""
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            status = main([script] + words[1:])
        print(words[0], status, text.getvalue().strip().replace("\n", " / "))
    return 0
