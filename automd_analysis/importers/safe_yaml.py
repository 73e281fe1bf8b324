"""A YAML loader for agent configuration dumps that never constructs Python objects.

AIDE and AI-Scientist-v2 save their configuration with OmegaConf, which writes ``pathlib`` paths
as ``!!python/object/apply:pathlib.PosixPath`` followed by the list of path parts, and missing
values as ``???``. ``yaml.safe_load`` refuses the tag; ``yaml.load`` with an unsafe loader would
*call* ``pathlib.PosixPath`` (and any other callable a hostile file names). This loader accepts
exactly that one tag and turns it into the joined path **string**; every other non-standard tag is
refused without constructing anything, and so are aliases (no billion-laughs expansion).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["POSIX_PATH_TAG", "UnsafeYamlError", "load_agent_yaml"]

#: The only Python tag accepted (OmegaConf's dump of a ``pathlib.PosixPath``).
POSIX_PATH_TAG = "tag:yaml.org,2002:python/object/apply:pathlib.PosixPath"


class UnsafeYamlError(ValueError):
    """The YAML document uses a tag (or an alias) this loader refuses."""


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


_AgentConfigLoader.add_constructor(POSIX_PATH_TAG, _posix_path)
_AgentConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", _refuse)
_AgentConfigLoader.add_multi_constructor("!", _refuse)
_AgentConfigLoader.add_constructor(None, lambda loader, node: _refuse(loader, "", node))


def load_agent_yaml(text: str) -> Any:
    """Parse an agent's YAML configuration dump as plain data.

    Accepts standard YAML plus OmegaConf's ``!!python/object/apply:pathlib.PosixPath`` tag, which
    becomes the joined path string (``["/", "home", "data"]`` → ``"/home/data"``). Nothing is ever
    imported, called or constructed from a tag.

    Parameters
    ----------
    text : str
        The YAML document.

    Returns
    -------
    object
        Dicts, lists, strings, numbers, booleans and ``None``.

    Raises
    ------
    UnsafeYamlError
        For any other tag (``!!python/object/apply:os.system``, ``!custom``...) or an alias.
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
    >>> load_agent_yaml("goal: ???\\nsteps: 20\\n")
    {'goal': '???', 'steps': 20}
    >>> try:
    ...     load_agent_yaml("x: !!python/object/apply:os.system ['echo pwned']\\n")
    ... except UnsafeYamlError as exc:
    ...     print(exc)
    YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not accepted
    """
    return yaml.load(text, Loader=_AgentConfigLoader)  # the loader only builds plain data
