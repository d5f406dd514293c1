"""What the bench scripts that print one markdown table share: print it, and
write it to --markdown FILE as well when one is given."""
import pathlib
import sys


def emit(lines, markdown=None):
    """the table's lines to stdout, and to `markdown` when given; returns 0 for main()"""
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if markdown:
        pathlib.Path(markdown).write_text(text)
    return 0
