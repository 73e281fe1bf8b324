"""A YAML loader for agent configuration dumps that never constructs Python objects.

AIDE and AI-Scientist-v2 save their configuration with OmegaConf, which writes ``pathlib`` paths
as ``!!python/object/apply:pathlib.PosixPath`` followed by the list of path parts (Python 3.13
moved the class, so newer dumps say ``pathlib._local.PosixPath``), and missing values as
``???``. ``yaml.safe_load`` refuses the tag; ``yaml.load`` with an unsafe loader would
*call* ``pathlib.PosixPath`` (and any other callable a hostile file names). This loader accepts
exactly those path tags and turns them into the joined path **string**; every other non-standard
tag is refused without constructing anything, and so are aliases (no billion-laughs expansion).
Collections nested deeper than a limit are refused from the event stream, before the (recursive)
composer builds anything.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import yaml

__all__ = ["PATH_TAGS", "POSIX_PATH_TAG", "UnsafeYamlError", "YamlTooDeepError", "load_agent_yaml"]

#: OmegaConf's dump of a ``pathlib.PosixPath`` (Python up to 3.12).
POSIX_PATH_TAG = "tag:yaml.org,2002:python/object/apply:pathlib.PosixPath"
#: The only Python tags accepted: POSIX paths, from every Python version's ``pathlib``.
PATH_TAGS = tuple(
    f"tag:yaml.org,2002:python/object/apply:{module}.{cls}"
    for module in ("pathlib", "pathlib._local")
    for cls in ("PosixPath", "PurePosixPath")
)


_OPENING = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSING = np.frombuffer(b"]}", dtype=np.uint8)


class UnsafeYamlError(ValueError):
    """The YAML document uses a tag (or an alias) this loader refuses."""


class YamlTooDeepError(yaml.YAMLError):
    """The YAML document nests collections deeper than the limit."""


class _AgentConfigLoader(yaml.SafeLoader):
    """SafeLoader + OmegaConf's PosixPath tag (as a string); no aliases."""

    def compose_node(self, parent, index):  # PyYAML hook
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise UnsafeYamlError(f"YAML aliases are not accepted (alias {event.anchor!r})")
        return super().compose_node(parent, index)


def _posix_path(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    if not isinstance(node, yaml.SequenceNode):
        raise UnsafeYamlError("a PosixPath tag must hold a list of path parts")
    parts = loader.construct_sequence(node)
    if not all(isinstance(p, str) for p in parts):
        raise UnsafeYamlError("PosixPath parts must be strings")
    if not parts:
        return "."
    head, *rest = parts
    return "/".join([head.rstrip("/") if head != "/" else "", *rest]) if rest else head


def _refuse(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node):
    raise UnsafeYamlError(f"YAML tag {node.tag!r} is not accepted")


for _tag in PATH_TAGS:
    _AgentConfigLoader.add_constructor(_tag, _posix_path)
_AgentConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", _refuse)
_AgentConfigLoader.add_multi_constructor("!", _refuse)
_AgentConfigLoader.add_constructor(None, lambda loader, node: _refuse(loader, "", node))


def _bracket_depth(text: str) -> int:
    """The deepest running count of ``[``/``{`` over ``]``/``}`` (quotes ignored: an upper bound
    on flow-collection nesting, cheap where PyYAML's scanner is quadratic in it)."""
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = np.isin(data, _OPENING).astype(np.int8) - np.isin(data, _CLOSING).astype(np.int8)
    return int(np.cumsum(step, dtype=np.int64).max(initial=0))


def _check_depth(text: str, max_depth: int) -> None:
    if _bracket_depth(text) > max_depth:
        raise YamlTooDeepError(f"flow collections are nested more than {max_depth} levels deep")
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlTooDeepError(f"collections are nested more than {max_depth} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load_agent_yaml(text: str, *, max_depth: int = 100) -> Any:
    """Parse an agent's YAML configuration dump as plain data.

    Accepts standard YAML plus OmegaConf's ``!!python/object/apply:pathlib.PosixPath`` tag (also
    as ``pathlib._local.PosixPath`` and ``PurePosixPath``), which becomes the joined path string
    (``["/", "home", "data"]`` → ``"/home/data"``). Nothing is ever imported, called or
    constructed from a tag.

    Parameters
    ----------
    text : str
        The YAML document.
    max_depth : int
        Deepest nesting of mappings/sequences accepted.

    Returns
    -------
    object
        Dicts, lists, strings, numbers, booleans and ``None``.

    Raises
    ------
    UnsafeYamlError
        For any other tag (``!!python/object/apply:os.system``, ``!custom``...) or an alias.
    YamlTooDeepError
        For collections nested deeper than ``max_depth`` (checked before composing).
    yaml.YAMLError
        For a syntax error.

    See Also
    --------
    yaml.safe_load : the standard safe loader, which refuses the PosixPath tag as well.

    References
    ----------
    OmegaConf ``OmegaConf.save`` writes ``pathlib`` values with PyYAML's Python tags; PyYAML
    documents the ``!!python/object/apply`` tag family.

    Examples
    --------
    >>> load_agent_yaml("data_dir: !!python/object/apply:pathlib.PosixPath\\n- /\\n- home\\n- data\\n")
    {'data_dir': '/home/data'}
    >>> load_agent_yaml("log_dir: !!python/object/apply:pathlib._local.PosixPath\\n- logs\\n- 0-exp\\n")
    {'log_dir': 'logs/0-exp'}
    >>> load_agent_yaml("goal: ???\\nsteps: 20\\n")
    {'goal': '???', 'steps': 20}
    >>> try:
    ...     load_agent_yaml("x: !!python/object/apply:os.system ['echo pwned']\\n")
    ... except UnsafeYamlError as exc:
    ...     print(exc)
    YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not accepted
    """
    _check_depth(text, max_depth)
    return yaml.load(text, Loader=_AgentConfigLoader)  # the loader only builds plain data
