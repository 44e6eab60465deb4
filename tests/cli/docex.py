#!/usr/bin/env python3
"""docex.py DOC OUTDIR - the examples of README.md or gpubatch.1, as steps.

Writes one directory per step, OUTDIR/001, OUTDIR/002, ..., in document
order, each with:
  kind     sh (run it), gpu (run it where a GPU is usable), setup-build
           (README's first set-up command, with its leading "make && "
           removed: the caller has built already),
           setup-test (README's second set-up command, not run), or bad (the
           document breaks a rule; why is in cmd.sh)
  cmd.sh   the shell text of the step
  expect   (optional) what the step must print on standard output (a
           command shown without output is not checked: sbatch, say,
           prints a job number)
  more     (optional) present when the shown output ends in "...": the
           output need only start with the lines of expect
  where    the document and the first command line, for messages

README.md: fenced blocks. ```sh blocks are run; a ```text block right after
a ```sh block is that block's expected output; in ```console blocks every
"$ " line is a command (continued by lines after a trailing backslash) and
the lines up to the next "$ " line are its expected output. The "Set up"
section must hold exactly two ```sh blocks: "make && ..." and "make deps test".

gpubatch.1: the .EX/.EE blocks of the EXAMPLES section, as plain text. A
block with "$ " lines is read as a console block, any other as a sh block;
a block after the comment line `.\" docex: gpu` is of kind gpu: run only
where a GPU is usable.
In a console block, "$ cat FILE" followed by lines is a file listing: the
step writes FILE with those lines (the commands after it use the file) and
checks that cat prints them.
"""
import os
import re
import sys


def roff_to_text(line):
    for a, b in (("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\(mu", "x"), ("\\e", "\\"),
                 ("\\&", ""), ("\\|", ""), ("\\~", " "), ("\\fB", ""), ("\\fI", ""),
                 ("\\fR", ""), ("\\fP", "")):
        line = line.replace(a, b)
    return line


def markdown_blocks(text):
    """(section, lang, lines) for each fenced block."""
    section = ""
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#") and not ln.startswith("#!"):
            section = ln.lstrip("#").strip()
        m = re.match(r"^```(\w*)\s*$", ln)
        if m:
            lang = m.group(1)
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append((section, lang, body))
        i += 1
    return blocks


def man_blocks(text):
    blocks = []
    in_examples = False
    body = None
    gpu = False
    for ln in text.split("\n"):
        if ln.startswith(".SH"):
            in_examples = ln.strip() == ".SH EXAMPLES"
            continue
        if not in_examples:
            continue
        if ln.strip() == '.\\" docex: gpu':
            gpu = True
        elif ln.startswith(".EX"):
            body = []
        elif ln.startswith(".EE"):
            if body is not None:
                lang = "console" if any(b.startswith("$ ") for b in body) else "sh"
                blocks.append(("EXAMPLES", "gpu" if gpu else lang, body))
            body = None
            gpu = False
        elif body is not None:
            if ln.startswith(".\\\""):
                continue
            body.append(roff_to_text(ln))
    return blocks


def console_steps(body):
    """(command, expected lines) for each "$ " command of a console block."""
    steps = []
    i = 0
    while i < len(body):
        ln = body[i]
        if not ln.startswith("$ "):
            i += 1
            continue
        cmd = [ln[2:]]
        i += 1
        while cmd[-1].endswith("\\") and i < len(body):
            cmd.append(body[i])
            i += 1
        out = []
        while i < len(body) and not body[i].startswith("$ "):
            out.append(body[i])
            i += 1
        steps.append(("\n".join(cmd), out))
    return steps


class Writer:
    def __init__(self, doc, outdir):
        self.doc = os.path.basename(doc)
        self.outdir = outdir
        self.n = 0

    def step(self, kind, cmd, expect=None):
        self.n += 1
        d = os.path.join(self.outdir, "%03d" % self.n)
        os.makedirs(d)
        more = False
        if expect is not None:
            if expect and expect[-1].strip() == "...":
                expect = expect[:-1]
                more = True
        with open(os.path.join(d, "kind"), "w") as f:
            f.write(kind + "\n")
        with open(os.path.join(d, "cmd.sh"), "w") as f:
            f.write(cmd.rstrip("\n") + "\n")
        if expect:
            with open(os.path.join(d, "expect"), "w") as f:
                f.write("".join(e + "\n" for e in expect))
        if more:
            open(os.path.join(d, "more"), "w").close()
        first = cmd.strip().split("\n")[0]
        with open(os.path.join(d, "where"), "w") as f:
            f.write("%s: %s\n" % (self.doc, first[:100]))


def console(w, body):
    for cmd, out in console_steps(body):
        m = re.match(r"^cat (\S+)$", cmd)
        if m and out:
            name = m.group(1)
            listing = "cat > %s <<'DOCEX_EOF'\n%s\nDOCEX_EOF\ncat %s" % (name, "\n".join(out), name)
            w.step("sh", listing, out)
        else:
            w.step("sh", cmd, out)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: docex.py README.md|gpubatch.1 OUTDIR\n")
        return 2
    doc, outdir = sys.argv[1], sys.argv[2]
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    w = Writer(doc, outdir)
    if doc.endswith(".md"):
        blocks = markdown_blocks(text)
        setup = [b for b in blocks if b[0] == "Set up" and b[1] == "sh"]
        if len(setup) != 2:
            w.step("bad", "the Set up section has %d ```sh blocks, not 2" % len(setup))
        for k, (section, lang, body) in enumerate(blocks):
            cmd = "\n".join(body)
            nxt = blocks[k + 1] if k + 1 < len(blocks) else None
            expect = nxt[2] if nxt and nxt[1] == "text" else None
            if section == "Set up" and lang == "sh":
                if setup and body is setup[0][2]:
                    if len(body) != 1 or not body[0].startswith("make && "):
                        w.step("bad", "the first set-up command is not one line 'make && ...': " + cmd)
                    else:
                        w.step("setup-build", body[0][len("make && "):], expect)
                else:
                    w.step("setup-test", cmd)
            elif lang == "sh":
                w.step("sh", cmd, expect)
            elif lang == "console":
                console(w, body)
    else:
        for _, lang, body in man_blocks(text):
            if lang == "console":
                console(w, body)
            else:
                w.step(lang, "\n".join(body))
    if w.n == 0:
        sys.stderr.write("docex.py: no examples in %s\n" % doc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
