#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Gives uv the package index, proxy and certificates that pip uses.

scripts/run_tests.sh installs the test environments' locks with uv, which
reads neither `pip.conf` nor `PIP_*` variables. Behind a TLS-inspecting
proxy or with a private index, where pip works, uv then fails on its first
download (`Failed to fetch ... /simple/absl-py/`). noxfile.py and
scripts/chroot_env.sh run uv with the variables this module derives from
`pip config list` (pip's files and its `PIP_*` variables, as pip's
`install` command sees them):

  pip setting        uv variable
  index-url          UV_DEFAULT_INDEX
  extra-index-url    UV_INDEX, with UV_INDEX_STRATEGY=unsafe-best-match
                     (pip's way: a version from any index)
  find-links         UV_FIND_LINKS
  trusted-host       UV_INSECURE_HOST
  no-index           UV_NO_INDEX
  timeout            UV_HTTP_TIMEOUT
  cert               SSL_CERT_FILE
  client-cert        SSL_CLIENT_CERT
  proxy              HTTPS_PROXY and HTTP_PROXY

and UV_SYSTEM_CERTS=1 (formerly `--native-tls`), so that uv also trusts the
system's certificate store, as pip does from version 24.2. A variable that
is already set is left as it is. Local directories that do not exist are
dropped, as pip ignores them ("Location ... is ignored").

  python3 scripts/uv_env.py        # prints `export` lines for a shell:
  eval "$(python3 scripts/uv_env.py)"
"""

import ast
import os
import shlex
import subprocess
import sys
import urllib.parse

# pip's `install` command reads its files' [global], then [install]
# sections, then PIP_* variables; each later one wins.
_SECTIONS = ("global", "install", ":env:")


def parse_pip_config(text):
  """{setting: value} from `pip config list` output, as `install` sees it."""
  found = {}
  for line in text.splitlines():
    key, sep, value = line.partition("=")
    if not sep or "." not in key:
      continue
    section, name = key.rsplit(".", 1) if not key.startswith(":env:.") else (
        ":env:", key[len(":env:."):])
    if section not in _SECTIONS:
      continue
    try:
      value = ast.literal_eval(value)
    except (SyntaxError, ValueError):
      value = value.strip("'\"")
    found.setdefault(name.replace("_", "-"), {})[section] = value
  return {name: by_section[max(by_section, key=_SECTIONS.index)]
          for name, by_section in found.items()}


def pip_config(python=sys.executable, environ=None):
  """`parse_pip_config` of `python -m pip config list`; {} without pip."""
  try:
    proc = subprocess.run([python, "-m", "pip", "config", "list"],
                          capture_output=True, text=True, check=False,
                          env=environ, stdin=subprocess.DEVNULL)
  except OSError:
    return {}
  return parse_pip_config(proc.stdout) if proc.returncode == 0 else {}


def _local_path(location):
  """The directory or file `location` names on this machine, else None."""
  if location.startswith("file:"):
    return urllib.parse.unquote(urllib.parse.urlparse(location).path)
  if "://" in location:
    return None
  return location


def _existing(locations):
  """`locations` less the local ones that are missing (pip ignores them)."""
  kept = []
  for location in locations:
    path = _local_path(location)
    if path is None or os.path.exists(path):
      kept.append(location)
  return kept


def _truthy(value):
  return str(value).strip().lower() in ("1", "true", "yes", "on")


def uv_environment(config, environ=None):
  """The variables that make uv see `config`, pip's settings.

  Args:
    config: {pip setting: value}, from `pip_config`.
    environ: the environment uv will run in (default: os.environ); a
      variable set there is not overridden.

  Returns:
    {variable: value} to add to `environ`.
  """
  environ = os.environ if environ is None else environ
  out = {}

  def put(name, value):
    if value and name not in environ:
      out[name] = value

  put("UV_SYSTEM_CERTS", "1")
  if config.get("index-url"):
    put("UV_DEFAULT_INDEX", config["index-url"])
  extra = _existing(config.get("extra-index-url", "").split())
  if extra:
    put("UV_INDEX", " ".join(extra))
    put("UV_INDEX_STRATEGY", "unsafe-best-match")
  links = _existing(config.get("find-links", "").split())
  if links:
    put("UV_FIND_LINKS", ",".join(links))
  if config.get("trusted-host"):
    put("UV_INSECURE_HOST", " ".join(config["trusted-host"].split()))
  if _truthy(config.get("no-index", "")):
    put("UV_NO_INDEX", "1")
  if config.get("timeout"):
    put("UV_HTTP_TIMEOUT", str(config["timeout"]))
  # pip's certificate is the one that works here: it wins over a
  # machine-wide SSL_CERT_FILE, which pip does not read.
  if config.get("cert"):
    out["SSL_CERT_FILE"] = config["cert"]
  if config.get("client-cert"):
    put("SSL_CLIENT_CERT", config["client-cert"])
  if config.get("proxy"):
    put("HTTPS_PROXY", config["proxy"])
    put("HTTP_PROXY", config["proxy"])
  return out


def main():
  for name, value in sorted(uv_environment(pip_config()).items()):
    print("export {}={}".format(name, shlex.quote(value)))
  return 0


if __name__ == "__main__":
  sys.exit(main())
