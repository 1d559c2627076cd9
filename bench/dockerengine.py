"""The private Docker engine the benches run their containers on
(re-exported by memextbench)."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class DockerEngine:
    """A private Docker engine (scripts/docker-engine: dockerd in a network
    namespace of its own, state in `engine_dir`, containers under `cgroup_parent`)
    and the base image it runs, built once with debootstrap."""

    IMAGE = "memext-base:bookworm-2"

    def __init__(self, engine_dir, cgroup_parent=None, image=None, packages=None):
        """`image` and `packages` (comma-separated Debian packages) name another
        debootstrap image than the base one (scripts/docker-engine builds it)."""
        self.dir = engine_dir
        self.IMAGE = image or DockerEngine.IMAGE
        self.env = {**os.environ, **({"MEMEXT_DOCKER_CGROUP": cgroup_parent} if cgroup_parent else {}),
                    **({"MEMEXT_IMAGE": image, "MEMEXT_IMAGE_PACKAGES": packages} if image else {})}
        self.cli = ["/usr/bin/docker", "-H", f"unix://{engine_dir}/docker.sock"]

    def _script(self, action):
        subprocess.run([os.path.join(ROOT, "scripts/docker-engine"), action, self.dir], check=True,
                       env=self.env, capture_output=True)

    def start(self, cleanup):
        """Starts the engine (stopped again by `cleanup`) and imports the image."""
        self._script("start")
        cleanup.push("stop the Docker engine", lambda: self._script("stop"))
        self._script("image")

    def restart(self):
        """Stops the engine (the script ends its containers' processes and
        removes what they left, bounded) and starts it again with its
        image: a deadlocked dockerd answers nothing until then."""
        self._script("stop")
        self._script("start")
        self._script("image")

    def docker(self, *args, check=True, timeout=None, stderr=False):
        """Runs the docker CLI against this engine; its stdout (`stderr`:
        with its stderr after it, as `docker logs` gives a container's).
        `timeout` (s): subprocess.TimeoutExpired past it (the client is
        killed)."""
        r = subprocess.run([*self.cli, *args], capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args[:3])}: {r.stderr.strip()}")
        return (r.stdout + r.stderr if stderr else r.stdout).strip()
