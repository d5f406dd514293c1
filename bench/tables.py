"""What the bench scripts share: print a markdown table, and write it to
--markdown FILE as well when one is given; run a command whose failure ends
the script with one line."""
import pathlib
import subprocess
import sys


def sh(cmd, who):
    """run cmd; its stdout, or exit naming `who`, the command and the end of its stderr"""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        sys.exit("%s: cannot run %s: %s (build it first, or give --build)" % (who, cmd[0], e.strerror))
    if r.returncode != 0:
        sys.exit("%s: %s failed: %s" % (who, " ".join(cmd), r.stderr.strip()[-600:]))
    return r.stdout


def emit(lines, markdown=None):
    """the table's lines to stdout, and to `markdown` when given; returns 0 for main()"""
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if markdown:
        pathlib.Path(markdown).write_text(text)
    return 0
