"""Structured logging to the host (`warden:plugin/log`, always available).

    from warden_sdk import log
    log.info("checked 3 paths")

Outside a component (plain CPython, e.g. the plugin's own tests) messages go to stderr.
"""

import sys

try:
    from wit_world.imports import log as _wit
except ImportError:  # not in a component build, or a world without `log`
    _wit = None


def _emit(level: str, message: str) -> None:
    if _wit is not None:
        try:
            _wit.log(getattr(_wit.Level, level), str(message))
            return
        except NotImplementedError:  # the editor bindings, not a component
            pass
    print(f"[{level.lower()}] {message}", file=sys.stderr)


def trace(message: str) -> None:
    _emit("TRACE", message)


def debug(message: str) -> None:
    _emit("DEBUG", message)


def info(message: str) -> None:
    _emit("INFO", message)


def warn(message: str) -> None:
    _emit("WARN", message)


def error(message: str) -> None:
    _emit("ERROR", message)
