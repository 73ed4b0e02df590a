// Findings about the whole job or a whole node, which no single rank's score expresses:
//   the scheduler ended the job (time limit, scancel, preemption) before any rank failed;
//   a node was lost (every rank of it silent, and its agent log stops without a word, or Slurm
//   says the node failed);
//   every rank raised the same error on its own (loading the checkpoint the job resumes from).
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

// True, and `f` filled, when the scheduler's word that it ended the job provably comes before
// (or within the clock-skew window of) every line of a rank's failure: exits, own errors, errors
// about peers, watchdog timeouts (analyze/order.h). When some failure line cannot be ordered
// against it, false, and f->problems says which.
bool SchedulerEndedJob(const Incident& inc, const JobFacts& facts, Finding* f);

// True, and `f` filled, when Slurm declared one node failed (slurmctld `not responding`, `setting
// DOWN`) and ended or requeued the job, though the node was not lost: the job kept training after
// the controller first found the node silent, and no rank failed on its own. Its slurmd (or the
// controller's path to it) failed, not the host: class SCHEDULER_NODE_FAILURE, owner scheduler.
bool SchedulerFailedNode(const Incident& inc, const JobFacts& facts, Finding* f);

// A requeued job (sbatch --requeue): names the requeue and the next run in the reason, and
// makes the restart precondition "verify the requeued run" (no-op when the job was not requeued).
// The diagnosis is of the run that failed; the next run's lines only say that it resumed.
void NoteRequeue(const Incident& inc, const JobFacts& facts, Finding* f);

// The node lost, when the leading candidates (`leaders`) all sit on one node that shows it
// (-1 when not): every rank of it silent and with no exit of its own, and Slurm's word that it
// failed or an agent log of it that stops with no failure report while other agents reported.
std::int32_t LostNode(const Incident& inc, const JobFacts& facts, const std::vector<std::int32_t>& leaders);

// Fills `f` for a lost node (the verdict names the node; rank -1).
void DiagnoseNodeLoss(const Incident& inc, const JobFacts& facts, std::int32_t node, Finding* f);

// The node whose torchrun agent alone was lost (-1 when not): no rank failed or reported a
// peer, some agent timed out in the exit barrier waiting for the others, and exactly one other
// agent's log stops with no word at all. Its workers may have run on as orphans.
std::int32_t LostAgent(const JobFacts& facts);

// The srun line of a torchrun agent's task killed by SIGKILL (`srun: error: <host>: task 1:
// Killed`, sbatch + srun + torchrun: srun's tasks are the agents), when that is the loss of the
// agent and its workers with it (-1 when not): it is the only agent task srun reports killed,
// it names its host, the scheduler did not end the job, no worker failed on its own (no own
// error, no kill its agent reported, no host cause), and some worker lost its peer (a closed
// connection, a timeout): the killed agent's workers were gone with it.
std::int32_t KilledAgentTask(const Incident& inc, const JobFacts& facts);

// Fills `f` for that loss: node loss of the task's host, owner host; the victims are secondary.
void DiagnoseKilledAgentTask(const Incident& inc, const JobFacts& facts, std::int32_t task_line, Finding* f);

// Fills `f` for a lost agent: class node loss, owner unknown (the host ran on; nothing says who
// ended the agent).
void DiagnoseLostAgent(const Incident& inc, const JobFacts& facts, std::int32_t node, Finding* f);

// True, and `f` filled, when (nearly) every rank that left a log raised the same exception of its
// own and no watchdog wave followed: the ranks failed together, none because of another, so the
// whole job is the initiator (rank -1, no node) and there is no cascade. The class is the
// error's (FAILURE_CLASS_CHECKPOINT_LOAD for a checkpoint that cannot be loaded), owner the
// application's.
bool JobWideError(const Incident& inc, const JobFacts& facts, Finding* f);

}  // namespace denpex::engine
