#!/usr/bin/env python3
"""Builds the Python components of a plugin exactly as `warden build` does.

    python3 sdk/python/scripts/build.py PLUGIN_DIR [COMPONENT ...] [--print-argv]

For each component of PLUGIN_DIR/warden.toml whose `build.lang` is "python" (or only the
named ones), this lays out a scratch directory, runs componentize-py and writes the
component to its `path`. See sdk/python/README.md, "How warden build runs it", for the
recipe this follows step by step. Needs Python 3.11+ (tomllib) and componentize-py 0.25.1.
"""

import keyword
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

VERSION = "0.25.1"
SDK = pathlib.Path(__file__).resolve().parent.parent  # sdk/python
WIT = SDK.parent.parent / "wit" / "v0.1"
# Capability keys of warden.toml, in the order of world names.
CAPABILITIES = ["fs", "net", "exec", "env"]
RESERVED = {"warden_sdk", "wit_world", "componentize_py_types", "componentize_py_runtime",
            "componentize_py_async_support", "poll_loop"}


def find_componentize_py() -> str:
    exe = os.environ.get("WARDEN_COMPONENTIZE_PY") or shutil.which("componentize-py")
    if not exe:
        sys.exit(
            "error: componentize-py not found (looked at $WARDEN_COMPONENTIZE_PY and PATH); "
            f"Python components need componentize-py {VERSION}: "
            f"pip install componentize-py=={VERSION} (in a virtualenv; put its bin/ on PATH "
            "or set WARDEN_COMPONENTIZE_PY to the executable)"
        )
    out = subprocess.run([exe, "--version"], capture_output=True, text=True)
    found = out.stdout.strip()
    if out.returncode != 0 or found != f"componentize-py {VERSION}":
        sys.exit(
            f"error: {exe} is {found or 'not runnable'}, but Python components need "
            f"componentize-py {VERSION}: pip install componentize-py=={VERSION}"
        )
    return exe


def world_name(component: dict) -> str:
    world = component.get("world", "hook")
    if world not in ("hook", "tool"):
        sys.exit(f"error: unknown world {world!r}")
    caps = component.get("capabilities", {})
    return "-".join([world] + [c for c in CAPABILITIES if caps.get(c)])


def build(exe: str, plugin: pathlib.Path, name: str, component: dict, print_argv: bool) -> None:
    spec = component["build"]
    sources = spec["source"] if isinstance(spec["source"], list) else [spec["source"]]
    module = pathlib.Path(sources[0]).stem
    if not module.isidentifier() or keyword.iskeyword(module) or module in RESERVED \
            or module in sys.stdlib_module_names:
        sys.exit(f"error: {name}: {sources[0]} must be named like a Python module that is not "
                 "a standard-library module, warden_sdk or wit_world (e.g. hook.py)")
    out = (plugin / component["path"]).resolve()
    with tempfile.TemporaryDirectory(prefix="warden-build-py-") as tmp:
        t = pathlib.Path(tmp)
        shutil.copytree(WIT, t / "wit" / "plugin")
        (t / "wit" / "python").mkdir()
        shutil.copy(SDK / "wit" / "worlds.wit", t / "wit" / "python" / "worlds.wit")
        shutil.copytree(SDK / "warden_sdk", t / "sdk" / "warden_sdk",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (t / "app").mkdir()
        for s in sources:
            dest = t / "app" / pathlib.Path(s).name
            if dest.exists():
                sys.exit(f"error: {name}: two sources named {dest.name}")
            shutil.copy(plugin / s, dest)
        (t / "site" / "lib" / "site-packages").mkdir(parents=True)
        argv = [
            exe,
            "-d", str(t / "wit" / "plugin"),
            "-d", str(t / "wit" / "python"),
            "-w", f"warden:python/{world_name(component)}@0.1.0",
            "componentize", module,
            "-p", str(t / "app"),
            "-p", str(t / "sdk"),
            "-o", str(out),
        ]
        env = dict(os.environ, VIRTUAL_ENV=str(t / "site"), RUST_BACKTRACE="0", RUST_LIB_BACKTRACE="0")
        if print_argv:
            print(f"VIRTUAL_ENV={env['VIRTUAL_ENV']} RUST_BACKTRACE=0 RUST_LIB_BACKTRACE=0", " ".join(argv), file=sys.stderr)
        start = time.monotonic()
        done = subprocess.run(argv, cwd=t, env=env, capture_output=True, text=True)
        took = time.monotonic() - start
        if done.returncode != 0:
            sys.stderr.write(done.stdout + done.stderr)
            sys.exit(f"error: {name}: componentize-py failed (exit {done.returncode})")
    print(f"{name}: {out} ({out.stat().st_size} bytes, {took:.1f} s)")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    plugin = pathlib.Path(args[0]).resolve()
    manifest = tomllib.loads((plugin / "warden.toml").read_text())
    wanted = set(args[1:])
    exe = find_componentize_py()
    for name, component in manifest.get("components", {}).items():
        spec = component.get("build")
        if spec and spec.get("lang") == "python" and (not wanted or name in wanted):
            build(exe, plugin, name, component, "--print-argv" in sys.argv)


if __name__ == "__main__":
    main()
