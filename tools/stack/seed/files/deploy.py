"""Deploys @NAME@ (@SLUG@): builds, uploads and switches the live release."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

LOG = logging.getLogger("deploy")
RELEASES = Path("/srv/@SLUG@/releases")


@dataclass
class Release:
    """One build of the service, ready to be switched to."""

    version: str
    artifact: Path
    checksum: str = ""
    notes: list[str] = field(default_factory=list)

    def verify(self) -> bool:
        digest = hashlib.sha256(self.artifact.read_bytes()).hexdigest()
        return digest == self.checksum


class DeployError(RuntimeError):
    """A step failed; the live release was left alone."""


def run(cmd: list[str], cwd: Path | None = None) -> str:
    LOG.info("running %s", " ".join(cmd))
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise DeployError(f"{cmd[0]} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def build(version: str, workdir: Path) -> Release:
    run(["cargo", "build", "--release", "--locked"], cwd=workdir)
    artifact = workdir / "target" / "release" / "@SLUG@"
    checksum = hashlib.sha256(artifact.read_bytes()).hexdigest()
    return Release(version=version, artifact=artifact, checksum=checksum)


def upload(release: Release, host: str) -> None:
    target = f"{host}:{RELEASES}/{release.version}/"
    run(["rsync", "-az", str(release.artifact), target])


def switch(release: Release, host: str) -> None:
    link = RELEASES / "current"
    run(["ssh", host, f"ln -sfn {RELEASES}/{release.version} {link}"])
    run(["ssh", host, "systemctl restart @SLUG@"])


def healthy(host: str, attempts: int = 10) -> bool:
    for n in range(attempts):
        try:
            out = run(["curl", "-fsS", f"http://{host}:8080/health"])
            if json.loads(out).get("status") == "ok":
                return True
        except (DeployError, ValueError):
            LOG.warning("health check %d of %d failed", n + 1, attempts)
        time.sleep(2)
    return False


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("version")
    parser.add_argument("--host", action="append", default=[])
    parser.add_argument("--workdir", type=Path, default=Path.cwd())
    parser.add_argument("--dry-run", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    args = parse_args(argv)
    release = build(args.version, args.workdir)
    if args.dry_run:
        LOG.info("built %s (%s); not deploying", release.version, release.checksum[:12])
        return 0
    for host in args.host:
        upload(release, host)
        switch(release, host)
        if not healthy(host):
            LOG.error("%s is not healthy after the switch", host)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
