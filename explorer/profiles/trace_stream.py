"""A PyTorch profiler trace read as a stream: the JSON text is decoded a megabyte at a time
(gzip expanded as it is read) and ``traceEvents`` a run of whole events at a time (about
64 kB of text, in one call of the decoder; one event at a time where a run does not
decode), so memory follows the events the reader uses, not the file's size.

Only the events ``profiles.kineto`` reads are kept, each with only the fields it reads:
kernels, CPU ops, CUDA runtime and driver calls, CUPTI counter ranges and the profiler's
steps. Every other event is kept as one shared ``{"cat": …}`` per category (a trace's
categories name its accelerator), so an event's place in the list, which errors name, is
its place in the file. The text is checked as strictly as ``parse_json`` checks it (a key
written twice is refused, nothing may follow the object); anything the stream cannot read
is handed back (``Unstreamable``) and the whole file read as before, so that a broken
trace's error is worded exactly as it was.
"""

from __future__ import annotations

import codecs
import gc
import json
import os
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from explorer.core.files.errors import DataFileError
from explorer.core.files.jsonfile import DuplicateKey, _refuse_duplicates
from explorer.core.files.reading import open_regular

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
STEP_PREFIX = "ProfilerStep#"
KEPT_CATEGORIES = frozenset(("kernel", "Kernel", "cpu_op", "cuda_runtime", "cuda_driver"))
RANGE = "cuda_profiler_range"  # kept whole: its args are the counters
KEPT = KEPT_CATEGORIES | {RANGE}
FIELDS = ("ph", "cat", "name", "ts", "dur", "pid", "tid")
ARGS = ("External id", "correlation", "device", "flops", "Input Dims", "Input type", "Concrete Inputs")
_SPACE = re.compile(r"[ \t\n\r]*")
_BETWEEN = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
_CLOSED = frozenset('}]"')


class Unstreamable(Exception):
    """The stream met something it does not read (bad JSON or UTF-8, a duplicate key, no
    object at the top): the whole file is read instead, and refused in its own words."""


Progress = Callable[[float], None]  # the share of the file read so far, 0 to 1 (it may raise to stop)


STEPS = 200  # progress reports over a CSV profile's lines


def reported(lines: Sequence[str], progress: Progress | None) -> Iterator[str]:
    """``lines`` one by one, ``progress`` told the share passed at every ``STEPS``-th of them
    (a CSV profile's rows, read a line at a time: the import's bar moves and its Cancel stops
    it)."""
    total = max(len(lines), 1)
    every = -(-total // STEPS)  # (rounded up: at most STEPS + 1 reports)
    for number, line in enumerate(lines):
        if progress is not None and number % every == 0:
            progress(number / total)
        yield line


def expanded(path: str | Path, handle: BinaryIO, limit: int,
             progress: Progress | None = None) -> Iterator[bytes]:
    """The file's bytes, gzip expanded, in chunks; refused past ``limit`` bytes either way;
    ``progress`` is told the share of the file read after each chunk."""
    size = os.fstat(handle.fileno()).st_size

    def read(n: int) -> bytes:
        data = handle.read(n)
        if progress is not None:
            progress(min(1.0, handle.tell() / size) if size else 1.0)
        return data

    if size > limit:
        raise DataFileError(path, f"is {size / 2**20:.1f} MB or more; files over {limit >> 20} MB are "
                                  "refused (is it the right file?)")
    data = read(CHUNK)
    if not data.startswith(GZIP_MAGIC):
        seen = 0
        while data:
            seen += len(data)
            if seen > limit:
                raise DataFileError(path, f"is {seen / 2**20:.1f} MB or more; files over {limit >> 20} MB "
                                          "are refused (is it the right file?)")
            yield data
            data = read(CHUNK)
        return
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    out_total = 0
    while True:
        try:
            out = inflater.decompress(data, CHUNK)
        except zlib.error:
            raise Unstreamable from None
        out_total += len(out)
        if out_total > limit:
            raise DataFileError(path, f"expands beyond {limit >> 20} MB: refused (is it the right file?)")
        if out:
            yield out
        if inflater.eof:
            return
        data = inflater.unconsumed_tail
        if not data:
            data = read(CHUNK)
            if not data:
                return  # (cut short: the JSON ends early and is refused as a whole)


def slim(event: Any, placeholders: dict[str, dict], shared: dict | None = None) -> Any:
    """What ``kineto`` reads of one event (see the module's description). Its category,
    name and the text and lists of its args are ``shared``: one object for each distinct
    value (a trace repeats a few hundred kernel names and op shapes thousands of times)."""
    if type(event) is not dict:  # (JSON's objects are dicts, its texts strs and its arrays lists)
        return None
    category = event.get("cat")
    if type(category) is not str:
        category = ""
    placeholder = placeholders.get(category)
    if placeholder is None:  # (each category's first event: the categories are counted here)
        placeholder = placeholders[category] = {"cat": category} if category else {}
    if category not in KEPT:
        named = event.get("name")
        if type(named) is not str or not named.startswith(STEP_PREFIX):
            return placeholder
    if shared is None:
        shared = {}
    setdefault = shared.setdefault
    out = {key: event[key] for key in FIELDS if key in event}
    if category:
        out["cat"] = setdefault(category, category)
    named = out.get("name")
    if type(named) is str:
        out["name"] = setdefault(named, named)
    if "args" in event:
        args = event["args"]
        if type(args) is dict and category != RANGE:
            kept = {}
            for key in ARGS:
                if key in args:
                    value = args[key]
                    if type(value) is str:
                        value = setdefault(value, value)
                    elif type(value) is list:
                        value = setdefault(("list", repr(value)), value)
                    kept[key] = value
            args = kept
        out["args"] = args
    return out


class _Text:
    """UTF-8 text decoded from chunks of bytes, read on as the parser needs it."""

    def __init__(self, chunks: Iterator[bytes]):
        self.chunks = chunks
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self, at_least: int = 0) -> bool:
        """Read at least one more chunk (``at_least`` characters more, where given)."""
        grown = 0
        parts = [self.buf[self.pos:]]
        while not self.eof and (grown == 0 or grown < at_least):
            data = next(self.chunks, None)
            try:
                text = self.decoder.decode(data or b"", final=data is None)
            except UnicodeDecodeError:
                raise Unstreamable from None
            if data is None:
                self.eof = True
            parts.append(text)
            grown += len(text) + (data is None)
        self.buf, self.pos = "".join(parts), 0
        return grown > 0

    def skip_space(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof or not self.more():
                return ""

    def value(self, decoder: json.JSONDecoder) -> Any:
        """The JSON value at the position, read on until it is whole."""
        want = CHUNK
        while True:
            try:
                value, end = decoder.scan_once(self.buf, self.pos)  # type: ignore[attr-defined]
                if end < len(self.buf) or self.eof or self.buf[end - 1] in _CLOSED:
                    self.pos = end
                    return value
            except (DuplicateKey, RecursionError):
                raise Unstreamable from None
            except (ValueError, StopIteration):  # (cut by the buffer's end, or broken)
                if self.eof:
                    raise Unstreamable from None
            self.more(want)
            want *= 2

    def expect(self, characters: str) -> str:
        found = self.skip_space()
        if not found or found not in characters:
            raise Unstreamable
        self.pos += 1
        return found


def streamed(path: str | Path, limit: int,
             progress: Progress | None = None) -> tuple[dict[str, Any], set[str]]:
    """The trace's top-level object, its ``traceEvents`` slimmed (``slim``), and the
    categories its events name; ``progress``: as ``expanded``."""
    decoder = json.JSONDecoder(object_pairs_hook=_refuse_duplicates)
    with open_regular(path) as handle:
        text = _Text(expanded(path, handle, limit, progress))
        text.expect("{")
        doc: dict[str, Any] = {}
        placeholders: dict[str, dict] = {}
        if text.skip_space() == "}":
            text.pos += 1
        else:
            while True:
                if text.skip_space() != '"':
                    raise Unstreamable
                key = text.value(decoder)
                text.expect(":")
                if key in doc:
                    raise Unstreamable
                if key == "traceEvents" and text.skip_space() == "[":
                    doc[key] = _events(text, decoder, placeholders)
                else:
                    text.skip_space()
                    doc[key] = text.value(decoder)
                if text.expect(",}") == "}":
                    break
        if text.skip_space():
            raise Unstreamable  # (something after the object)
    return doc, set(placeholders) - {""}


BATCH = 1 << 16  # the text of the events decoded at once (a few hundred): one C call, not one an event
BACKOFF = 256  # events read one at a time after a run that did not decode, before the next try


def _batch(text: _Text, strict: Callable) -> list | None:
    """The whole events in the next ``BATCH`` characters or so of the buffer, decoded as one
    array, the position moved past them and the comma after the last; None where there are
    none or the run does not decode (the caller then reads ``BACKOFF`` events one at a
    time). The run ends at a ``}`` that a comma and a ``{`` follow: where that ``}`` lies
    inside a text or a nested object, the run (read from an event's start, so tokenised as
    the whole text is) cannot close as an array of whole values and is not taken.
    ``strict``: the decoder's scanner, which refuses a key written twice: a run with one,
    or with anything else it cannot read, is read again one event at a time, which words
    its error."""
    if len(text.buf) - text.pos < BATCH and not text.eof:
        text.more(BATCH)  # (a whole run where the text has one: not the few events left in the buffer)
    buf, pos = text.buf, text.pos
    end = buf.rfind("}", pos, pos + BATCH)
    while end > pos:
        comma = _BETWEEN.match(buf, end + 1)
        if comma is not None and comma.end() < len(buf) and buf[comma.end()] == "{":
            break
        end = buf.rfind("}", pos, end)
    else:
        return None
    run = "[" + buf[pos:end + 1] + "]"
    try:
        events, stop = strict(run, 0)
    except (ValueError, StopIteration, RecursionError):
        return None
    if stop != len(run):
        return None
    text.pos = comma.end()
    return events


def _events(text: _Text, decoder: json.JSONDecoder, placeholders: dict[str, dict]) -> list:
    shared: dict = {}
    text.pos += 1  # "["
    events: list = []
    if text.skip_space() == "]":
        text.pos += 1
        return events
    append, value, between = events.append, text.value, _BETWEEN.match
    scan = decoder.scan_once  # type: ignore[attr-defined]
    singly = 0  # events to read one at a time before trying a run again
    enabled = gc.isenabled()
    gc.disable()  # (events hold no cycles: a collection would walk every kept one, again and again)
    try:
        while True:
            if not text.skip_space():
                raise Unstreamable
            if singly:
                singly -= 1
            elif text.buf[text.pos] == "{":
                run = _batch(text, scan)
                if run:  # (then the next event follows the comma, in the buffer)
                    events += [slim(event, placeholders, shared) for event in run]
                    continue
                singly = BACKOFF
            append(slim(value(decoder), placeholders, shared))
            comma = between(text.buf, text.pos)  # (the common case: ", " and the next event in the buffer)
            if comma and comma.end() < len(text.buf):
                text.pos = comma.end()
                continue
            if text.expect(",]") == "]":
                return events
    finally:
        if enabled:
            gc.enable()
