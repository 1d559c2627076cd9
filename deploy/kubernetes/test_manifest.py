"""Checks of the DaemonSet manifest: what a node agent of memext's kind needs
(privileged, host PID, the host's cgroups, containerd's state, its own state
dir on the host, Prometheus annotations, never managing itself) and its
ConfigMap's policy being deploy/kubernetes/memext.toml."""
import os
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


class ManifestTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(HERE, "daemonset.yaml")) as f:
            self.docs = {d["kind"]: d for d in yaml.safe_load_all(f)}

    def test_the_configmap_holds_the_policy_file(self):
        with open(os.path.join(HERE, "memext.toml")) as f:
            self.assertEqual(self.docs["ConfigMap"]["data"]["memext.toml"], f.read())

    def test_the_daemonset_is_a_privileged_host_agent(self):
        pod = self.docs["DaemonSet"]["spec"]["template"]
        spec, c = pod["spec"], pod["spec"]["containers"][0]
        self.assertTrue(spec["hostPID"])
        self.assertTrue(c["securityContext"]["privileged"])
        self.assertEqual(c["imagePullPolicy"], "Never")
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        host = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
        self.assertEqual(host[mounts["/host/sys/fs/cgroup"]], "/sys/fs/cgroup")
        self.assertEqual(host[mounts["/run/containerd"]], "/run/containerd")
        self.assertEqual(host[mounts["/var/lib/memext"]], "/var/lib/memext")
        ann = pod["metadata"]["annotations"]
        self.assertEqual(ann["prometheus.io/scrape"], "true")
        self.assertIn(f"0.0.0.0:{ann['prometheus.io/port']}", c["args"])
        self.assertEqual(ann["memext.io/class"], "ignore")


if __name__ == "__main__":
    unittest.main()
