// The platform's word on a pod (Kubernetes, docs/log_formats.md §24 (Kubernetes)): `kubectl get events` and
// `kubectl describe pod` say a pod was evicted, OOMKilled, or that its node went NotReady. The
// engine tells "the platform ended the job" (an eviction: no rank failed on its own) from "a
// rank failed and the platform cleaned up" (the controller deleting the other pods: `Killing`
// events and torchrun's `Received Signals.SIGTERM death signal` everywhere but the initiator).
#pragma once

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

// True, and `f` filled, when a pod's end explains the job: evicted (owner scheduler), its
// container OOMKilled at the memory limit (host OOM), or its node NotReady (node loss); or, under
// Ray, when the driver's first ActorDiedError does: the actor's node died (node loss), Ray's
// memory monitor killed it (host OOM), or its worker process died (a segfault when its
// faulthandler dump is on that node, else a kill nothing explains). §25 (Ray).
bool PlatformEndedJob(const Incident& inc, const JobFacts& facts, Finding* f);

// Kubernetes restarts (§24, "Restarts"): when the job's controller restarted the job, says so
// after the diagnosis of the first attempt: the restart (JobSet's `Restarting`), the later
// attempts' pod logs set aside, a replacement pod the scheduler could not place
// (`FailedScheduling`, cited: a capacity fact, not the cause), the containers left in
// CrashLoopBackOff, and the restart budget running out (`ReachedMaxRestarts`, a PyTorchJob's
// `... reached the specified backoff limit`, cited as context): why the job ended, apart from
// what started it.
void NoteRestarts(const Incident& inc, Finding* f);

}  // namespace denpex::engine
