#!/usr/bin/env python3
r"""Doxygen input filter for Cerium's headers (docs/Doxyfile.in, FILTER_PATTERNS): plain `//` comments -> Doxygen's.

The headers document their API with ordinary `//` comments, which Doxygen ignores. This filter reads one header
(the path Doxygen passes) and writes it to stdout with:
  - the block of `//` lines directly above a declaration (no blank line between) at namespace, class or enum
    scope turned into `///`. The headers' convention is that such a comment covers every declaration below it
    up to the next blank line or comment (overloads, an `op` and its `op_inplace`; a function's body, blank and
    comment lines in it included, is part of its declaration): that run becomes a Doxygen member group (`@{` ...
    `///@}`, or `/**@}*/` before the `}`, access specifier or comment that ends the run when its last line has a
    comment of its own), whose first member's text DISTRIBUTE_GROUP_DOC gives to the others;
  - the block of `//` lines directly above a `#define` turned into `///`: the macro's docs. Doxygen reads only
    the branch of an `#if` that its preprocessor takes, so a macro defined on both branches is documented above
    the definition on that branch (in config.hpp, the host compiler's `#else`);
  - a section line (`// --- Keys (...) ---`) directly above declarations: its words document that run the same
    way; followed by more `//` lines, those document it instead;
  - a trailing `// ...` after a member, a declaration or an enumerator turned into `///<`, with the `//` lines
    below it that continue it at the same column;
  - the header's opening comment (before any declaration, not directly above one) turned into the file's
    description (`\file`);
  - in those comments, an example or table indented past the text and set off by empty `//` lines is fenced
    (`~~~`), and `<word` outside backquotes is escaped (`\<`: not an HTML tag).
Comments inside function bodies and initializers, and blocks followed by a blank line, stay plain comments.
Every line stays where it was (markers are added inside lines), so Doxygen's warnings give the header's own
line numbers. Only the standard library is used.

Usage: doxygen-comments.py HEADER   (writes the filtered header to stdout)
"""
import re
import sys

SEPARATOR = re.compile(r"^//\s*(-{3,}|={3,}|\*{3,}|~{3,}|#{3,})")
SEPARATOR_WORDS = re.compile(r"^\s*[-=*~#]{3,}|[-=*~#]{3,}\s*$")
DEFINE = re.compile(r"^#\s*define\s")
ACCESS = re.compile(r"^(public|protected|private)\s*:")
NOT_DOCUMENTED = re.compile(r"^(\}|namespace\b|inline\s+namespace\b|using\s+namespace\b|static_assert\b|#|extern\s+template\b)")


def split_line(line, in_block_comment):
    """Splits a line into (code with literals and comments blanked, column of a `//` comment or -1,
    still inside a /* */ comment at the end)."""
    code = []
    i, n = 0, len(line)
    while i < n:
        if in_block_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(code), -1, True
            code.append(" " * (end + 2 - i))
            i = end + 2
            in_block_comment = False
            continue
        c = line[i]
        if line.startswith("//", i):
            return "".join(code), i, False
        if line.startswith("/*", i):
            in_block_comment = True
            i += 2
            code.append("  ")
            continue
        if c in "\"'":
            # a string or character literal (a digit separator 1'000 is not one)
            if c == "'" and i > 0 and line[i - 1].isalnum():
                code.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            code.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            continue
        code.append(c)
        i += 1
    return "".join(code), -1, in_block_comment


def strip_template_prefix(head):
    """Removes a leading `template <...>` (balanced angle brackets) from a declaration head."""
    m = re.match(r"template\s*<", head)
    if not m:
        return head
    depth, i = 1, m.end()
    while i < len(head) and depth:
        depth += {"<": 1, ">": -1}.get(head[i], 0)
        i += 1
    return head[i:].lstrip()


def scope_kind(head):
    """What a `{` opens, from the code since the previous `;`, `{` or `}`."""
    head = " ".join(head.split())
    head = re.sub(r"^(\[\[.*?\]\]\s*)+", "", head)
    head = strip_template_prefix(head)
    if re.match(r"^(inline\s+)?namespace\b", head) or re.match(r'^extern\s*"', head):
        return "namespace"
    if re.match(r"^(typedef\s+)?(class|struct|union)\b", head) and "(" not in head.split(":")[0] and "=" not in head:
        return "class"
    if re.match(r"^enum\b", head):
        return "enum"
    return "other"


def analyse(lines):
    """Per line: (code, comment column, scope stack at the line's start, stack depth at its end)."""
    info = []
    stack = []
    head = []
    in_block = False
    continued_directive = False
    for line in lines:
        code, col, in_block_next = split_line(line, in_block)
        start_stack = list(stack)
        directive = continued_directive or code.lstrip().startswith("#")
        continued_directive = directive and line.rstrip().endswith("\\")
        if not directive:
            for ch in code:
                if ch == "{":
                    stack.append(scope_kind("".join(head)))
                    head = []
                elif ch == "}":
                    if stack:
                        stack.pop()
                    head = []
                elif ch == ";":
                    head = []
                else:
                    head.append(ch)
            head.append(" ")
        info.append((code, col, start_stack, len(stack), directive))
        in_block = in_block_next
    return info


def in_declaration_scope(stack):
    return all(kind != "other" for kind in stack)


def escape_markup(text):
    """`<word` outside backquotes would read as an HTML tag (`template <class T>`, `std::vector<double>`): `\\<`."""
    parts = text.split("`")
    for k in range(0, len(parts), 2):
        parts[k] = re.sub(r"<(?=[A-Za-z_/])", r"\\<", parts[k])
    return "`".join(parts)


def to_doc(line, col, marker):
    """`//` at column col -> marker (`///` or `///<`), the text kept."""
    text = line[col + 2:]
    if text and not text.startswith(" "):
        text = " " + text
    return line[:col] + marker + escape_markup(text)


def fence_examples(out, lines, info, first, end):
    """In the doc block out[first:end], a run of lines indented past the block's text and set off by empty
    comment lines above and below (a code example, a table) becomes a fenced block: the two empty lines carry
    the fences, so it keeps its line breaks and needs no escapes."""
    def body(k):
        return lines[k][info[k][1] + 2:]
    k = first + 1
    while k < end - 1:
        if body(k - 1).strip() == "" and body(k).startswith("   ") and body(k).strip():
            m = k
            while m < end and body(m).startswith("   ") and body(m).strip():
                m += 1
            if m < end and body(m).strip() == "" and not re.match(r"[-*+]\s|\d+[.)]\s", body(k).strip()):
                c = info[k - 1][1]
                out[k - 1] = lines[k - 1][:c] + "/// ~~~"
                out[m] = lines[m][:c] + "/// ~~~"
                for r in range(k, m):
                    out[r] = lines[r][:info[r][1]] + "///" + body(r)
            k = m + 1
        else:
            k += 1


def declaration_run(info, lines, j):
    """The lines of the declarations that start at line j and follow each other without a blank line or a
    comment line, and how many declarations they hold: (last line, count). A function's body (or an
    initializer's) belongs to its declaration, blank and comment lines in it included."""
    depth = len(info[j][2])
    last, count = j - 1, 0
    k = j
    while k < len(lines):
        code, col, stack, end_depth, directive = info[k]
        stripped = code.strip()
        if len(stack) > depth and stack[depth] == "other":
            # inside the body: the declaration ends on the line that closes it
            if end_depth == depth and stripped.endswith((";", "}")):
                count += 1
            last = k
            k += 1
            continue
        if not stripped or directive or len(stack) < depth:
            break
        if len(stack) == depth and (stripped.startswith("}") or ACCESS.match(stripped)):
            break
        if len(stack) == depth and end_depth == depth and stripped.endswith((";", "}")):
            count += 1
        last = k
        k += 1
    if last < j or info[last][3] != depth:
        return last, 0
    return last, count


def group_end(lines, info, last):
    """Where a member group whose last declaration ends on line `last` closes: (line, how), or None when it
    cannot. The marker goes at the end of that line ("append"); when the line has a comment of its own (a marker
    before a `///<` would move the comment), below it and the `//` lines that continue that comment: on a blank
    line ("blank"), before the `}`, access specifier or comment that ends the run ("prefix", as `/**@}*/`), or
    after the file's last line ("eof")."""
    if info[last][1] < 0:
        return last, "append"
    n = len(lines)
    k = last + 1
    while k < n and info[k][1] == info[last][1] and not info[k][0].strip():
        k += 1
    if k == n:
        return k, "eof"
    code = info[k][0].strip()
    if not lines[k].strip():
        return k, "blank"
    if not info[k][4] and (code.startswith("}") or ACCESS.match(code) or (info[k][1] >= 0 and not code)):
        return k, "prefix"
    return None


def filter_header(text):
    lines = text.split("\n")
    info = analyse(lines)
    out = list(lines)
    n = len(lines)
    seen_declaration = False
    group_ends = []
    i = 0
    while i < n:
        code, col, stack, end_depth, directive = info[i]
        pure_comment = col >= 0 and not code.strip()
        if pure_comment:
            # a block of whole-line comments
            j = i
            while j < n and info[j][1] >= 0 and not info[j][0].strip():
                j += 1
            block = range(i, j)
            nxt = info[j] if j < n else None
            nxt_code = nxt[0].strip() if nxt else ""
            documents_next = (
                nxt is not None
                and nxt_code
                and in_declaration_scope(stack)
                and (
                    DEFINE.match(nxt_code)
                    if nxt[4]
                    else not NOT_DOCUMENTED.match(nxt_code) and not ACCESS.match(nxt_code)
                )
            )
            if documents_next and not any(lines[k].lstrip().startswith(("///", "//!")) for k in block):
                first = i
                for k in block:
                    if SEPARATOR.match(lines[k].lstrip()):
                        first = k + 1
                if first == j:
                    # a section line directly above declarations: its words document them
                    k = j - 1
                    words = SEPARATOR_WORDS.sub("", lines[k][info[k][1] + 2:]).strip()
                    if words:
                        out[k] = lines[k][:info[k][1]] + "/// " + words + ("" if words.endswith(".") else ".")
                        first = k
                for k in range(first, j):
                    if k != first or out[k] == lines[k]:
                        out[k] = to_doc(lines[k], info[k][1], "///")
                fence_examples(out, lines, info, first, j)
                if first < j:
                    last, count = declaration_run(info, lines, j)
                    end = group_end(lines, info, last) if count >= 2 else None
                    if end is not None:
                        out[j - 1] += " @{"
                        group_ends.append((*end, last))
            elif not seen_declaration and not stack and not any(SEPARATOR.match(lines[k].lstrip()) for k in block):
                # the header's opening comment: its description
                for k in block:
                    out[k] = to_doc(lines[k], info[k][1], "///")
                fence_examples(out, lines, info, i, j)
                out[j - 1] += " \\file"
                seen_declaration = True
            i = j
            continue
        if code.strip() and not directive:
            seen_declaration = True
        if col >= 0 and code.strip() and not directive and in_declaration_scope(stack) and end_depth == len(stack):
            stripped = code.rstrip()
            member = stripped.endswith((";", ",", "}")) or (
                stack and stack[-1] == "enum" and re.match(r"^\s*\w+(\s*=\s*[^{};]+)?$", stripped))
            if member and not lines[i][col:].startswith(("///", "//!")):
                out[i] = to_doc(lines[i], col, "///<")
                # `//` lines below it, at the same column, continue it
                k = i + 1
                while k < n and info[k][1] == col and not info[k][0].strip():
                    out[k] = to_doc(lines[k], col, "///<")
                    k += 1
                i = k
                continue
        i += 1
    for k, how, last in group_ends:
        if how == "append":
            out[k] += " ///@}"
        elif how == "blank":
            indent = len(lines[last]) - len(lines[last].lstrip())
            out[k] = " " * indent + "///@}"
        elif how == "prefix":
            indent = len(lines[k]) - len(lines[k].lstrip())
            out[k] = out[k][:indent] + "/**@}*/ " + out[k][indent:]
        else:
            out.append("///@}")
    return "\n".join(out)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    sys.stdout.write(filter_header(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
