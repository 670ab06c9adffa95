#!/usr/bin/env python3
"""Writes kb/engines/<engine>-flags.toml: the flag names an engine's argument
parser accepts, with what each takes (a value, nothing, a list), its type,
choices and literal default, read from the engine's source by Python's ast
(names only: no help text is copied).

Usage: scripts/gen-engine-flags.py sglang VERSION path/to/sglang/srt/server_args.py > kb/engines/sglang-flags.toml
       scripts/gen-engine-flags.py vllm VERSION path/to/vllm/engine/arg_utils.py [more .py] > kb/engines/vllm-flags.toml
The source comes from the engine's published wheel (unzip it; nothing is imported).
"""
import ast
import json
import sys


def literal(node, consts):
    try:
        return ast.literal_eval(node)
    except Exception:
        pass
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return consts.get(f"{node.value.id}.{node.attr}")
    if isinstance(node, ast.List):
        out = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                v = literal(e.value, consts)
                if not isinstance(v, list):
                    return None
                out.extend(v)
            else:
                v = literal(e, consts)
                if v is None:
                    return None
                out.append(v)
        return out
    return None


def collect_consts(tree):
    consts = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = literal(node.value, consts)
            if v is not None:
                if isinstance(v, (set, tuple)):
                    v = sorted(v) if isinstance(v, set) else list(v)
                consts[node.targets[0].id] = v
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
                    v = literal(st.value, consts)
                    ann = ast.unparse(st.annotation)
                    consts[f"{node.name}.{st.target.id}"] = v
                    consts[f"__ann__{node.name}.{st.target.id}"] = ann
                    consts[f"__ann__{st.target.id}"] = ann
    return consts


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v if isinstance(x, (str, int, float, bool))) + "]"
    return None


def typ_hint(kw):
    return "type" in kw


def main():
    engine, version, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    # `file.py:Class` also turns every annotated field of Class into `--field-name`
    # (vLLM builds its frontend flags from a dataclass).
    paths = [s.split(":")[0] for s in specs]
    field_classes = {s.split(":")[1] for s in specs if ":" in s}
    trees = [ast.parse(open(p).read()) for p in paths]
    consts = {}
    for t in trees:
        consts.update(collect_consts(t))
    flags = {}
    for t in trees:
        for node in ast.walk(t):
            if isinstance(node, ast.ClassDef) and node.name in field_classes:
                for st in node.body:
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                        name = st.target.id
                        ann = ast.unparse(st.annotation)
                        takes = "switch" if ann == "bool" else "list" if ann.startswith("list") else "value"
                        e = flags.setdefault(name, {"names": ["--" + name.replace("_", "-")], "takes": takes})
                        typ = {"int": "int", "float": "float", "str": "str"}.get(ann.split(" |")[0])
                        if typ:
                            e["type"] = typ
                        d = literal(st.value, consts) if st.value is not None else None
                        if d is not None and toml_value(d) is not None:
                            e["default"] = d
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
                continue
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")]
            if not names:
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            dest = kw.get("dest")
            dest = dest.value if isinstance(dest, ast.Constant) else None
            longs = [n for n in names if n.startswith("--")]
            if dest is None:
                dest = (longs[0] if longs else names[0]).lstrip("-").replace("-", "_")
            action = kw.get("action")
            action_s = action.value if isinstance(action, ast.Constant) else (ast.unparse(action) if action is not None else "")
            nargs = kw.get("nargs")
            nargs_s = nargs.value if isinstance(nargs, ast.Constant) else (ast.unparse(nargs) if nargs is not None else None)
            ann = consts.get(f"__ann__{dest}", "")
            if not typ_hint(kw) and engine == "vllm":
                typ_from_ann = {"int": "int", "float": "float", "str": "str"}.get(ann.split(" |")[0])
            else:
                typ_from_ann = None
            if action_s in ("store_true", "store_false", "store_const") or "StoreTrue" in action_s or "StoreConst" in action_s:
                takes = "switch"
            elif "BooleanOptional" in action_s or (kw.get("type") is None and engine == "vllm" and ann.replace(" ", "") in ("bool", "bool|None", "Optional[bool]")):
                takes = "switch"
            elif ann.startswith("list") and engine == "vllm" and "type" not in kw:
                takes = "list"
            elif nargs_s in ("+", "*") or (nargs_s is not None and str(nargs_s).isdigit() and int(nargs_s) > 1):
                takes = "list"
            elif nargs_s == "?":
                takes = "optional"
            else:
                takes = "value"
            typ = kw.get("type")
            typ_s = ast.unparse(typ) if typ is not None else ""
            typ_s = {"int": "int", "float": "float", "str": "str"}.get(typ_s, "")
            entry = flags.setdefault(dest, {"names": [], "takes": takes})
            for n in names:
                if n not in entry["names"]:
                    entry["names"].append(n)
            typ_s = typ_s or typ_from_ann or ""
            if typ_s:
                entry["type"] = typ_s
            ch = literal(kw["choices"], consts) if "choices" in kw else None
            if isinstance(ch, (list, set, tuple)) and ch:
                entry["choices"] = [c for c in (sorted(ch) if isinstance(ch, set) else list(ch)) if isinstance(c, (str, int, float))]
            d = literal(kw["default"], consts) if "default" in kw else None
            if d is None and engine == "vllm" and "default" not in kw:
                d = consts.get(f"EngineArgs.{dest}")
            if d is not None:
                if toml_value(d) is not None:
                    entry["default"] = d
            if action_s and "Deprecated" in action_s:
                entry["deprecated"] = True
    print(f"# The flags of {engine} {version}'s argument parser: names, what each takes, type, choices,")
    print(f"# literal defaults. Generated by scripts/gen-engine-flags.py from the published {engine}")
    print(f"# {version} wheel ({', '.join(p.split('/' + engine + '/', 1)[-1] for p in paths)}); regenerate, do not edit.")
    print(f'engine = "{engine}"')
    print(f'version = "{version}"')
    for dest in sorted(flags):
        e = flags[dest]
        print()
        print(f"[flags.{dest}]")
        print(f"names = {toml_value(e['names'])}")
        print(f'takes = "{e["takes"]}"')
        for k in ("type", "choices", "default", "deprecated"):
            if k in e and toml_value(e[k]) is not None:
                print(f"{k} = {toml_value(e[k])}")


main()
