"""``planner.toml``: the defaults a team shares (its cluster, its metastore, its HiveServer2).

Looked for, first found wins: the file ``$PLANNER_CONFIG`` names (it must exist), else
``planner.toml`` in the current folder, else ``$XDG_CONFIG_HOME/planner/planner.toml`` (by default
``~/.config/planner/planner.toml``). Every key is optional::

    master = "yarn"                          # as --master
    metastore = "thrift://hms.example:9083"  # as --metastore
    state_dir = "/srv/planner/state"         # as --state-dir
    calibration = "calibration.json"         # as --calibration

    [conf]                                   # as --conf k=v, one per key
    "spark.executor.memory" = "8g"
    "spark.executor.instances" = "20"

    [hiveserver2]                            # as --hiveserver2 and its --hs2-* options
    address = "hs2.example:10000"
    auth = "LDAP"                            # NONE, NOSASL, LDAP, CUSTOM or KERBEROS
    user = "etl"
    password_env = "PLANNER_HS2_PASSWORD"    # the password itself never goes in a file
    kerberos_service = "hive"

Relative paths are relative to the file's folder. A command-line option beats the file, and the
file beats what the environment implies (a ``hive-site.xml``'s metastore, ``spark-defaults.conf``'s
master); ``$PLANNER_HOME`` beats the file's ``state_dir``, as an environment variable set for one
shell beats a team's file. An unknown key is an error naming the file and the key, not a
default silently ignored.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from planner.errors import InputError

ENV = "PLANNER_CONFIG"
NAME = "planner.toml"
AUTH_MODES = ("NONE", "NOSASL", "LDAP", "CUSTOM", "KERBEROS")
DEFAULT_PASSWORD_ENV = "PLANNER_HS2_PASSWORD"

_TOP = {"master", "metastore", "state_dir", "calibration", "conf", "hiveserver2"}
_HS2 = {"address", "auth", "user", "password_env", "kerberos_service"}


@dataclass(frozen=True)
class HiveServer2Config:
    address: str | None = None
    auth: str | None = None
    user: str | None = None
    password_env: str | None = None
    kerberos_service: str | None = None


@dataclass(frozen=True)
class PlannerConfig:
    """The settings of one ``planner.toml`` (all None/empty: no file)."""

    path: Path | None = None
    master: str | None = None
    metastore: str | None = None
    state_dir: str | None = None
    calibration: str | None = None
    conf: tuple[tuple[str, str], ...] = ()
    hiveserver2: HiveServer2Config = field(default_factory=HiveServer2Config)

    def where(self) -> str:
        return str(self.path) if self.path else "planner.toml"


def config_path(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """The ``planner.toml`` in effect (None: none)."""
    env = os.environ if env is None else env
    if env.get(ENV):
        path = Path(env[ENV]).expanduser()
        if not path.is_file():
            raise InputError(f"${ENV} names {path}, which is not a file")
        return path
    here = (cwd or Path.cwd()) / NAME
    if here.is_file():
        return here
    base = Path(env["XDG_CONFIG_HOME"]).expanduser() if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    user = base / "planner" / NAME
    return user if user.is_file() else None


def load_config(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> PlannerConfig:
    path = config_path(env, cwd)
    return PlannerConfig() if path is None else read_config(path)


def read_config(path: Path) -> PlannerConfig:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"{path}: cannot read it: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not TOML: {e}") from None
    _known(path, "", doc, _TOP)
    hs2 = doc.get("hiveserver2", {})
    if not isinstance(hs2, dict):
        raise InputError(f"{path}: [hiveserver2] must be a table of keys ({', '.join(sorted(_HS2))})")
    _known(path, "hiveserver2.", hs2, _HS2)
    conf = doc.get("conf", {})
    if not isinstance(conf, dict) or any(isinstance(v, (dict, list)) for v in conf.values()):
        raise InputError(f"{path}: [conf] must hold Spark settings, one quoted key per line "
                         '("spark.executor.memory" = "8g")')
    auth = _text(path, "hiveserver2.auth", hs2.get("auth"))
    if auth is not None and auth.upper() not in AUTH_MODES:
        raise InputError(f"{path}: hiveserver2.auth must be one of {', '.join(AUTH_MODES)}, not {auth!r}")
    folder = path.parent
    return PlannerConfig(
        path=path,
        master=_text(path, "master", doc.get("master")),
        metastore=_text(path, "metastore", doc.get("metastore")),
        state_dir=_path(folder, _text(path, "state_dir", doc.get("state_dir"))),
        calibration=_path(folder, _text(path, "calibration", doc.get("calibration"))),
        conf=tuple((str(k), _value(v)) for k, v in conf.items()),
        hiveserver2=HiveServer2Config(
            address=_text(path, "hiveserver2.address", hs2.get("address")),
            auth=auth.upper() if auth else None,
            user=_text(path, "hiveserver2.user", hs2.get("user")),
            password_env=_text(path, "hiveserver2.password_env", hs2.get("password_env")),
            kerberos_service=_text(path, "hiveserver2.kerberos_service", hs2.get("kerberos_service"))),
    )


def _known(path: Path, prefix: str, doc: dict, keys: set[str]) -> None:
    unknown = sorted(set(doc) - keys)
    if unknown:
        hint = " (a password goes in an environment variable: hiveserver2.password_env)" \
            if "password" in unknown else ""
        raise InputError(f"{path}: unknown key {prefix}{unknown[0]}; known: "
                         f"{', '.join(prefix + k for k in sorted(keys))}{hint}")


def _text(path: Path, key: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{path}: {key} must be a string, not {value!r}")
    return value.strip() or None


def _value(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)  # Spark spells booleans lower case


def _path(folder: Path, value: str | None) -> str | None:
    if value is None:
        return None
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else (folder / p).resolve())


__all__ = ["AUTH_MODES", "DEFAULT_PASSWORD_ENV", "HiveServer2Config", "PlannerConfig", "config_path", "load_config",
           "read_config"]
