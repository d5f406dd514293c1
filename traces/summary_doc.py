#!/usr/bin/env python3
"""docs/summary-json.md, generated from traces/summary_keys.h.

The header declares every key of summary.json once: a #define per key (its
macro and its text), grouped under comments, and, in its opening comment, the
shape of the document written with those macros.  This script reads both and
writes the reference: the shape with the real key names, then every key with
the path where it appears, its unit (read from its name, as the header's
convention says: _s seconds, _bytes bytes, _Bps bytes per second) and the
notes the shape gives it.  Nothing is written by hand, so the reference
cannot drift from the writer and the readers, which use the same macros.

usage: traces/summary_doc.py [HEADER] [--out FILE]
  HEADER defaults to summary_keys.h beside this script; the Markdown goes to
  stdout, or to FILE.
"""
import argparse
import os
import re
import sys

DEFINE = re.compile(r'^#define\s+(SPK_\w+)\s+(?:"([^"]*)"|(\d+))\s*$')
TOKEN = re.compile(r'SPK_\w+|\(|\)|[{}\[\]:,]|"[^"]*"|[^\s{}\[\]:,()]+')


def read_header(path):
    """(opening comment lines, {macro: key}, [(group, macro)], schema version)"""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.match(r"/\*(.*?)\*/", text, re.S)
    if not m:
        raise ValueError("%s: no opening comment" % path)
    comment = [re.sub(r"^ ?\* ?", "", line) for line in m.group(1).split("\n")]
    keys, order, group, version = {}, [], "the document", None
    for line in text[m.end():].split("\n"):
        c = re.match(r"^/\*\s*(.*?)\s*\*/\s*$", line)
        if c:
            group = c.group(1)
            continue
        d = DEFINE.match(line)
        if not d:
            continue
        if d.group(3) is not None:  # a number: the schema version
            version = int(d.group(3))
            continue
        keys[d.group(1)] = d.group(2)
        order.append((group, d.group(1)))
    return comment, keys, order, version


def split_comment(comment):
    """The prose of the opening comment and the shape (the lines from '{' to '}')."""
    start = next(i for i, l in enumerate(comment) if l.strip() == "{")
    end = max(i for i, l in enumerate(comment) if l.strip() == "}")
    prose = comment[1:start]  # the first line is the file's title
    while prose and not prose[-1].strip():
        prose.pop()
    while prose and not prose[0].strip():
        prose.pop(0)
    return prose, comment[start:end + 1]


def walk_shape(shape, keys):
    """Every key of the shape as (path, macro, notes, is_object), in the order written.

    'KEY: {' opens an object (a list of objects: 'KEY: [ {'); a lower-case
    word before ':' ('name: {') is a key that varies, shown as NAME; a note
    in parentheses belongs to the key or object just before it."""
    tokens = TOKEN.findall(" ".join(shape))
    stack, out = [], []  # stack: (path segment or None for the document, index of its entry)
    pending, last, list_open = None, None, False
    notes_seen = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if t == "(":
            depth, j = 1, i + 1
            while j < len(tokens) and depth:
                depth += tokens[j] == "("
                depth -= tokens[j] == ")"
                j += 1
            note = " ".join(tokens[i + 1:j - 1])
            note = re.sub(r"\s+([,:)\]])", r"\1", note).replace("( ", "(").replace("[ ", "[")
            for name in sorted(keys, key=len, reverse=True):
                note = re.sub(r"\b%s\b" % name, "`%s`" % keys[name], note)
            if note == "likewise" and notes_seen:  # the shape's ditto: the note before it
                note = notes_seen[-1]
            notes_seen.append(note)
            if last is not None:
                out[last][2].append(note)
            i = j
            continue
        is_key = t.startswith("SPK_") or (re.match(r"^[a-z]+$", t) and nxt == ":")
        if is_key:
            if t.startswith("SPK_") and t not in keys:
                raise ValueError("the shape names %s, which the header does not define" % t)
            name = keys[t] if t.startswith("SPK_") else t.upper()
            prefix = [seg for seg, _ in stack if seg]
            out.append([".".join(prefix + [name]), t if t.startswith("SPK_") else "", [], False])
            pending = last = len(out) - 1
        elif t == ",":
            pending, list_open = None, False
        elif t == "[":
            list_open = True
        elif t == "]":
            list_open = False
        elif t == "{":
            if pending is None:
                stack.append((None, None))  # the document, or an element of a list already named
            else:
                entry = out[pending]
                if list_open:
                    entry[0] += "[]"
                entry[3] = True
                stack.append((entry[0].rsplit(".", 1)[-1], pending))
                last = pending
            pending, list_open = None, False
        elif t == "}":
            _, idx = stack.pop() if stack else (None, None)
            last = idx
            pending = None
        i += 1
    return [tuple(e) for e in out]


def unit_of(key):
    """The unit a key's name says, as the header's convention has it; "" when none."""
    if "_per_s" in key:
        return "per second"
    if key.endswith("_s") or key == "wall_seconds":
        return "s"
    if key.endswith("_Bps"):
        return "B/s"
    if "bytes" in key:
        return "bytes"
    if "words" in key:
        return "words (4 bytes)"
    return ""


def render(header):
    comment, keys, order, version = read_header(header)
    prose, shape = split_comment(comment)
    entries = walk_shape(shape, keys)
    lines = ["# summary.json, key by key", "",
             "<!-- Generated from traces/summary_keys.h by `python3 traces/summary_doc.py`.",
             "     Do not edit: change the header and run that command again; the docs test compares. -->", ""]
    lines.append("Every run writes `summary.json` into its `--out` folder. Its keys are declared once, in")
    lines.append("`traces/summary_keys.h`, which the writer and every reader use; this page is generated from")
    lines.append("that header. Schema version: **%s** (key `%s`)." % (version, keys.get("SPK_SCHEMA", "?")))
    lines.append("")
    lines.append("What the header says of it:")
    lines.append("")
    for line in prose:
        lines.append("> " + line if line.strip() else ">")
    lines.append("")
    lines.append("## The shape")
    lines.append("")
    lines.append("`name` stands for a key that varies (a phase's name, a figure's name); the table below")
    lines.append("writes it NAME.")
    lines.append("")
    lines.append("```")
    for line in shape:
        shown = line
        for name in sorted(keys, key=len, reverse=True):
            shown = re.sub(r"\b%s\b" % name, '"%s"' % keys[name], shown)
        lines.append(shown.rstrip())
    lines.append("```")
    lines.append("")
    lines.append("## Every key where it appears")
    lines.append("")
    lines.append("| path | unit | macro | notes |")
    lines.append("|---|---|---|---|")
    for path, macro, notes, is_object in entries:
        parts = [seg.rstrip("[]") for seg in path.split(".")]
        unit = unit_of(parts[-1])
        if not unit and len(parts) > 1:  # a figure of an object whose name has the unit (time_per_iter_s.mean)
            unit = unit_of(parts[-2])
        if is_object:
            unit = "object" + (" of " + unit if unit else "")
        cell = "; ".join(notes).replace("|", "\\|")
        lines.append("| `%s` | %s | %s | %s |" % (path, unit, "`%s`" % macro if macro else "", cell))
    lines.append("")
    used = {m for _, m, _, _ in entries}
    cfg = [(g, m) for g, m in order if m.startswith("SPK_CFG_")]
    if cfg:
        lines.append("## Keys of `config` that the readers use")
        lines.append("")
        lines.append("`config` holds every option of `sparsim run` under its name (docs/options.md), as the run")
        lines.append("used it. The readers look up these by macro:")
        lines.append("")
        lines.append(", ".join("`%s` (`%s`)" % (keys[m], m) for _, m in cfg))
        lines.append("")
    loose = [(g, m) for g, m in order if m not in used and not m.startswith("SPK_CFG_")]
    if loose:
        lines.append("## Declared but not placed in the shape")
        lines.append("")
        for g, m in loose:
            lines.append("- `%s` (`%s`, %s)" % (keys[m], m, g))
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description="summary.json's reference from traces/summary_keys.h")
    ap.add_argument("header", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                              "summary_keys.h"))
    ap.add_argument("--out")
    a = ap.parse_args()
    try:
        text = render(a.header)
    except (OSError, ValueError, StopIteration) as e:
        print("summary_doc.py: %s" % (e or "the header's opening comment has no shape"), file=sys.stderr)
        return 1
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
