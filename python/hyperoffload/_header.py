# SPDX-License-Identifier: LGPL-2.1-or-later
"""Read the declarations the binding needs out of include/hyper/hyper.h.

The C header is the one definition of libhyper's ABI.  This parser covers
the subset the header uses (integer #defines, enums, structs of scalars,
pointers and arrays, prototypes, function-pointer typedefs) and turns it
into plain data; ``_decls.py`` is its output, checked in so that the
package works without the header installed, and a test checks that it
still matches the header (``python3 -m hyperoffload._header HEADER``
regenerates it).
"""
from __future__ import annotations

import os
import pprint
import re
import sys
from typing import Any, Dict, List, Tuple

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DEFINE = re.compile(r"^#define[ \t]+(HYPER_\w+)[ \t]+(.+)$", re.M)
_ENUM = re.compile(r"enum\s+(\w+)\s*\{([^}]*)\}\s*;")
_STRUCT = re.compile(r"struct\s+(\w+)\s*\{([^}]*)\}\s*;")
_TYPEDEF_FN = re.compile(r"typedef\s+([\w\s\*]+?)\s*\(\s*\*\s*(\w+)\s*\)\s*\(([^)]*)\)\s*;")
_PROTO = re.compile(r"^([\w][\w\s\*]*?[\s\*])(hyper_\w+)\s*\(([^)]*)\)\s*;", re.M)


def _norm_type(decl: str) -> Tuple[str, str]:
    """Split "const struct hyper_cop *before" into ("struct hyper_cop*", "before")."""
    decl = " ".join(decl.replace("*", " * ").split())
    m = re.match(r"^(.*?)(\w+)$", decl)
    if not m or not m.group(1).strip():
        return _type_only(decl), ""
    return _type_only(m.group(1)), m.group(2)


def _type_only(t: str) -> str:
    words = [w for w in t.replace("*", " * ").split() if w != "const"]
    stars = words.count("*")
    base = " ".join(w for w in words if w != "*")
    return base + "*" * stars


def _int_expr(expr: str, known: Dict[str, int]) -> int:
    expr = re.sub(r"(\d+)[uUlL]+\b", r"\1", expr)
    expr = re.sub(r"\b(HYPER_\w+)\b", lambda m: str(known[m.group(1)]), expr)
    if not re.fullmatch(r"[\d\s()<>|&x+\-a-fA-F]+", expr):
        raise ValueError(f"unsupported #define value {expr!r}")
    return int(eval(expr, {"__builtins__": {}}))  # digits and operators only


def parse(text: str) -> Dict[str, Any]:
    """Return {"defines", "enums", "structs", "callbacks", "functions"}."""
    text = _COMMENT.sub(" ", text).replace("\\\n", " ")
    defines: Dict[str, int] = {}
    for name, value in _DEFINE.findall(text):
        if name in ("HYPER_HYPER_H", "HYPER_PLAN_H"):
            continue
        defines[name] = _int_expr(value.strip(), defines)
    text = re.sub(r"^#.*$", "", text, flags=re.M)
    text = re.sub(r'extern\s+"C"\s*\{|^\}\s*$', "", text, flags=re.M)
    enums: Dict[str, Dict[str, int]] = {}
    for name, body in _ENUM.findall(text):
        vals: Dict[str, int] = {}
        nxt = 0
        for item in filter(None, (i.strip() for i in body.split(","))):
            key, _, val = (p.strip() for p in item.partition("="))
            nxt = _int_expr(val, {**defines, **vals}) if val else nxt
            vals[key] = nxt
            nxt += 1
        enums[name] = vals
    structs: List[Tuple[str, List[Tuple[str, str, int]]]] = []
    for name, body in _STRUCT.findall(text):
        fields = []
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            first, *more = (d.strip() for d in decl.split(","))
            m = re.match(r"^(.*?)\[(\d+)\]$", first)
            count = int(m.group(2)) if m else 0
            ftype, fname = _norm_type(m.group(1) if m else first)
            fields.append((fname, ftype, count))
            fields.extend((extra, ftype, 0) for extra in more)
        structs.append((name, fields))
    callbacks = []
    for ret, name, params in _TYPEDEF_FN.findall(text):
        callbacks.append((name, _type_only(ret), _params(params)))
    functions = []
    for ret, name, params in _PROTO.findall(_STRUCT.sub("", _ENUM.sub("", text))):
        functions.append((name, _type_only(ret), _params(params)))
    return {"defines": defines, "enums": enums, "structs": structs,
            "callbacks": callbacks, "functions": functions}


def _params(params: str) -> List[str]:
    params = " ".join(params.split())
    if params in ("", "void"):
        return []
    out = []
    for p in params.split(","):
        t, _ = _norm_type(p)
        out.append(t)
    return out


def render(decls: Dict[str, Any], header: str = "hyper.h", out: str = "_decls.py") -> str:
    """The text of _decls.py (or _plan_decls.py) for these declarations."""
    return ("# SPDX-License-Identifier: LGPL-2.1-or-later\n"
            f"# Generated from include/hyper/{header} by hyperoffload/_header.py;\n"
            f"# do not edit (python3 -m hyperoffload._header HEADER > {out}).\n"
            "DECLS = " + pprint.pformat(decls, width=100, sort_dicts=True) + "\n")


# <hyper/plan.h> includes <hyper/hyper.h>, whose declarations the binding
# already has (_decls.py): the planner's file holds only its own.
_OWN_ONLY = {"plan.h": ("hyper.h",)}


def read(path: str) -> str:
    """The header's text with the <hyper/...> headers it includes inlined.

    <hyper/hyper.h> takes its shared words (cache ops, tensor kinds, homes)
    from <hyper/vocab.h>, which sits beside it.  <hyper/plan.h> is read
    without <hyper/hyper.h> (see _OWN_ONLY).
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(path)
    skip = _OWN_ONLY.get(os.path.basename(path), ())
    return re.sub(r'^#include\s*<hyper/(\w+\.h)>\s*$',
                  lambda m: "" if m.group(1) in skip else read(os.path.join(here, m.group(1))),
                  text, flags=re.M)


OUTPUTS = {"hyper.h": "_decls.py", "plan.h": "_plan_decls.py"}

if __name__ == "__main__":
    if len(sys.argv) != 2 or os.path.basename(sys.argv[1]) not in OUTPUTS:
        sys.exit("usage: python3 -m hyperoffload._header include/hyper/{hyper,plan}.h")
    _name = os.path.basename(sys.argv[1])
    sys.stdout.write(render(parse(read(sys.argv[1])), _name, OUTPUTS[_name]))
