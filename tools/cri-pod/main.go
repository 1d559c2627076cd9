// cri-pod stands in for the kubelet in memext's tests: it drives a container
// runtime's CRI endpoint with the kubelet's own CRI client library
// (k8s.io/cri-client) to run a pod as the kubelet would, with annotations and
// the kubelet's cgroup parent, and to remove it again.
//
//	cri-pod -endpoint unix:///run/containerd/containerd.sock run \
//	    -name web -namespace default -uid UID -cgroup-parent /kubepods/burstable/podUID \
//	    -annotation memext.io/class=extend [-mount HOST=PATH] -image IMAGE -- CMD ARGS...
//	  prints "POD_ID CONTAINER_ID" once the container runs
//	cri-pod -endpoint ... rm POD_ID
//	  stops and removes the pod and its containers
//	cri-pod -endpoint ... version
//	  prints the runtime's name, version and CRI API version
//
// Pods share the node's network namespace (the kubelet's hostNetwork), so no
// CNI plugin is needed; the tests start the runtime in a network namespace of
// their own.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
)

// One deadline for each call to the runtime.
const callTimeout = 60 * time.Second

type annotations map[string]string

func (a annotations) String() string { return fmt.Sprint(map[string]string(a)) }

func (a annotations) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("annotation %q: want KEY=VALUE", kv)
	}
	a[k] = v
	return nil
}

func main() {
	endpoint := flag.String("endpoint", "", "the runtime's CRI endpoint, e.g. unix:///run/containerd/containerd.sock")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: cri-pod -endpoint URL run [flags] -- CMD ARGS... | rm POD_ID | version")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *endpoint == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*endpoint, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "cri-pod:", err)
		os.Exit(1)
	}
}

func run(endpoint string, args []string) error {
	ctx := context.Background()
	rs, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(endpoint).
		WithConnectionTimeout(callTimeout).
		Build(ctx)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	call, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	switch args[0] {
	case "version":
		v, err := rs.Version(call, "v1")
		if err != nil {
			return err
		}
		fmt.Println(v.RuntimeName, v.RuntimeVersion, v.RuntimeApiVersion)
		return nil
	case "rm":
		if len(args) != 2 {
			return fmt.Errorf("usage: rm POD_ID")
		}
		if err := rs.StopPodSandbox(call, args[1]); err != nil {
			return fmt.Errorf("stop pod %s: %w", args[1], err)
		}
		return rs.RemovePodSandbox(call, args[1])
	case "run":
		return runPod(call, rs, args[1:])
	}
	return fmt.Errorf("unknown command %q (run, rm, version)", args[0])
}

type runtimeService interface {
	RunPodSandbox(context.Context, *runtimeapi.PodSandboxConfig, string) (string, error)
	CreateContainer(context.Context, string, *runtimeapi.ContainerConfig, *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(context.Context, string) error
	RemovePodSandbox(context.Context, string) error
	StopPodSandbox(context.Context, string) error
}

func runPod(ctx context.Context, rs runtimeService, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	name := fs.String("name", "", "the pod's name (its container is named app)")
	namespace := fs.String("namespace", "default", "the pod's namespace")
	uid := fs.String("uid", "", "the pod's uid")
	parent := fs.String("cgroup-parent", "", "the pod's cgroup, as the kubelet gives it (e.g. /kubepods/burstable/pod<uid>)")
	image := fs.String("image", "", "the container's image (already in the runtime's image store)")
	logs := fs.String("log-dir", "", "the pod's log directory (none: no container log)")
	ann := annotations{}
	fs.Var(ann, "annotation", "a pod annotation KEY=VALUE (repeatable)")
	mounts := annotations{}
	fs.Var(mounts, "mount", "a read-only bind mount HOST_PATH=CONTAINER_PATH (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *uid == "" || *image == "" || fs.NArg() == 0 {
		return fmt.Errorf("run needs -name, -uid, -image and a command after --")
	}
	pod := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: *name, Uid: *uid, Namespace: *namespace},
		// No Hostname: a pod in the node's network namespace shares its UTS
		// namespace too, and the kubelet leaves the hostname to the node.
		LogDirectory: *logs,
		Annotations:  ann,
		Labels:       map[string]string{"io.kubernetes.pod.name": *name, "io.kubernetes.pod.namespace": *namespace},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: *parent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
			},
		},
	}
	podID, err := rs.RunPodSandbox(ctx, pod, "")
	if err != nil {
		return fmt.Errorf("run pod %s: %w", *name, err)
	}
	ctr := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: "app"},
		Image:       &runtimeapi.ImageSpec{Image: *image},
		Command:     fs.Args()[:1],
		Args:        fs.Args()[1:],
		Annotations: ann,
		Labels:      map[string]string{"io.kubernetes.container.name": "app"},
	}
	for host, path := range mounts {
		ctr.Mounts = append(ctr.Mounts, &runtimeapi.Mount{HostPath: host, ContainerPath: path, Readonly: true})
	}
	if *logs != "" {
		ctr.LogPath = "app.log"
	}
	id, err := rs.CreateContainer(ctx, podID, ctr, pod)
	if err == nil {
		err = rs.StartContainer(ctx, id)
	}
	if err != nil {
		// Leave nothing half made.
		_ = rs.StopPodSandbox(ctx, podID)
		_ = rs.RemovePodSandbox(ctx, podID)
		return fmt.Errorf("container of pod %s: %w", *name, err)
	}
	fmt.Println(podID, id)
	return nil
}
