"""PyYAML behind the app's data files: the strict, bounded loader and the writer. Imported
only when a text is parsed or written: at the window's start every data file comes from the
parse cache (``parse_cache``), and importing PyYAML is a twentieth of the time to the first
painted frame."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import yaml

from explorer.core.files.errors import DataFileError

# LibYAML's parser where PyYAML was built with it (ten times faster at start-up), with the
# same safe constructor either way.
_SafeBase: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # (a class; PyYAML has no types)


class _Bounded:
    """Refuses a document whose aliases expand it past ``MAX_VALUES`` or make it contain
    itself (checked on the composed nodes, before any value is built)."""

    if TYPE_CHECKING:  # the loader's, which it is mixed with
        def get_single_node(self) -> Any: ...

        def construct_document(self, node: Any) -> Any: ...

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return self.construct_document(node)


class _StrictLoader(_SafeBase):
    """A safe loader that rejects a mapping key written twice (YAML would keep the last)."""


class _StrictBoundedLoader(_Bounded, _StrictLoader):
    pass


class _BoundedLoader(_Bounded, _SafeBase):
    pass


def _loader(text: str, strict: bool = True) -> type:
    """The loader for ``text``: an alias is written ``*name``, so a text without a ``*``
    cannot expand and is not walked a second time (the catalogue loads at start-up)."""
    if "*" in text:
        return _StrictBoundedLoader if strict else _BoundedLoader
    return _StrictLoader if strict else _SafeBase


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"a key must be plain text, got {type(key).__name__}",
                key_node.start_mark)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None,
                f"duplicate key {key!r} (first on line {seen[key]}, again on line {line})",
                key_node.start_mark,
            )
        seen[key] = line
    return cast("dict[Any, Any]", yaml.SafeLoader.construct_mapping(loader, node, deep=deep))


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# A 4 MB file holds at most about two million values written out; aliases (``*name``) can
# make a few lines stand for billions (an expansion bomb) or for a value holding itself.
MAX_VALUES = 2_000_000


class ExpansionError(yaml.YAMLError):
    """A document that its aliases make too large, or make contain itself."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return cast("list[yaml.Node]", node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _check_expansion(root: yaml.Node) -> None:
    """Count the values ``root`` stands for with every alias followed (an alias is the
    node it names, shared in the graph), without building them: a cycle or a count over
    ``MAX_VALUES`` is refused before anything is constructed."""
    counted: dict[int, int] = {}
    open_nodes: set[int] = set()  # on the path from the root: an alias to one is a cycle
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            open_nodes.discard(id(node))
            total = 1 + sum(counted[id(child)] for child in _children(node))
            if total > MAX_VALUES:
                raise ExpansionError(f"its aliases expand it to more than {MAX_VALUES:,} values "
                                     "(an expansion bomb?); write the values out instead")
            counted[id(node)] = total
            continue
        if id(node) in counted:
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                mark = child.start_mark
                raise ExpansionError(f"an alias on line {mark.line + 1} refers to a value that "
                                     "contains it (a value cannot hold itself)")
            if id(child) not in counted:
                stack.append((child, False))


def parse(path: Path, text: str) -> Any:
    """``text`` (of ``path``) parsed strictly: no key twice, no alias bomb, no value that
    holds itself, no nesting too deep (each a ``DataFileError`` naming the file)."""
    try:
        return yaml.load(text, Loader=_loader(text))
    except RecursionError:
        raise DataFileError(path, "nests too deeply to read") from None
    except ExpansionError as exc:
        raise DataFileError(path, str(exc)) from None
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: e.g. an integer too long to convert
        raise DataFileError(path, f"is not valid YAML: {exc}".replace("\n", " ")) from exc


def peek(text: str) -> Any:
    """``text`` parsed leniently (a key written twice keeps its last value), still bounded;
    None when it cannot be parsed."""
    try:
        return yaml.load(text, Loader=_loader(text, strict=False))
    except (yaml.YAMLError, ValueError, RecursionError):
        return None


def dump(data: Any, **options: Any) -> str:
    """``data`` as YAML text (``yaml.safe_dump`` and its options)."""
    return cast(str, yaml.safe_dump(data, **options))
