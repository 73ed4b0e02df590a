// Reason: what a finding says in words (its reason, its recovery steps' texts), as template ids
// with named arguments. Analyze picks a template and fills its blanks with the facts (a node's
// name, a cited line's `file:line`, a rank list); report/reasons.cc holds the templates' words
// and renders them (docs/diagnosis_format.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace denpex::engine {

// One template per sentence shape; report/reasons.cc holds their words in this order.
enum class ReasonId : std::uint16_t {
  kVerbatim,  // {text}: words passed through as written (tests only: analyze writes templates)

  // analyze/describe.cc (the blanks several files fill)
  kExitBySignal,
  kExitBySignalNumber,
  kExitCode,

  // analyze/unranked.cc
  kSharedConsoleExit,
  kSharedConsoleOwnError,
  kSharedConsoleNoTraceback,
  kSharedConsoleUnknownRank,
  kOwnErrorOfOneNode,
  kFixOwnError,
  kFindWhyExited,
  kUnresponsiveWorker,
  kFindWhatStoppedPid,
  kSilentPeerOnOneNode,
  kStacksOnHost,
  kLoneStoreLoss,
  kCheckRendezvousHost,
  kVanishedAgent,
  kNoLineNamesHost,
  kCheckLostHost,

  // analyze/job_end.cc
  kEndedAtTimeLimit,
  kPreempted,
  kCancelled,
  kEndedByRequeue,
  kSlurmFailedLiveNode,
  kSlurmdAnsweredAgain,
  kSlurmdNotHostFailed,
  kResumeNode,
  kRequeued,
  kRequeuedNextRun,
  kDiagnosisOfFailedRun,
  kVerifyRequeuedRun,
  kTheScheduler,
  kBeforeAnyRankFailed,
  kBeforeAnyRankFailedAt,
  kRequeuedByScontrol,
  kRequeueClassOpen,
  kVerifyRequeuedJob,
  kResubmitLongerLimit,
  kResubmit,
  kKilledAgentTask,
  kCheckKilledTask,
  kLostAgent,
  kCheckLostAgent,
  kNodeLostItsRanks,
  kNodeLostAllRanks,
  kSlurmReportsNodeFailed,
  kKubernetesReportsNodeFailed,
  kLauncherLostNode,
  kAgentLogStops,
  kDrainNode,
  kJobWideError,
  kJobWideUnrankedError,
  kLoadingCheckpoint,
  kFailedAsWhole,
  kFixCheckpointConfig,
  kFixSameException,

  // analyze/platform.cc
  kPodEvicted,
  kFindMemoryUser,
  kPodOomKilled,
  kLowerPodMemory,
  kRayNodeDead,
  kCitedInParentheses,
  kRayActorDiedWithNode,
  kRayRank,
  kRayWorker,
  kRayMemoryMonitorKill,
  kLowerRayMemory,
  kRaySegfault,
  kReadCoreDump,
  kRayWorkerDied,
  kCheckKernelLogForKill,
  kControllerRestarted,
  kRestartedTimes,
  kRestartedTimesLast,
  kRestartedInPlace,
  kLastAttemptSetAside,
  kRestartedAttemptsSetAside,
  kRestartedAttemptSetAside,
  kPeriod,
  kFirstAttemptGone,
  kReplacementUnplaced,
  kCrashLoops,
  kRestartBudgetSpent,
  kPodDeletedAfterNotReady,
  kOnce,
  kTimes,

  // analyze/store.cc
  kRendezvousUnreachable,
  kRendezvousNeverJoined,
  kCheckRendezvousRoute,
  kStoreTimeoutNoSilentNode,
  kStoreTimeoutSilentNodes,
  kJobNeverStarted,
  kOneSilentNode,
  kSilentNodes,
  kHungTask,
  kHungTasks,
  kStoreErrorsAreConsequences,
  kCheckNodeStartsProcesses,
  kStoreHostLost,
  kStoreConnectionsNamedHost,
  kStoreHostOnlySilentAgent,
  kStoreHostInitiator,
  kCheckStoreHost,

  // analyze/partial.cc
  kAgentReportedWorkerFailed,
  kOnlyPeerError,
  kCollectEveryAgentConsole,
  kAtTime,
  kKilledByOomKiller,
  kThenSigtermOthers,
  kGlobalRankUnknown,
  kReadKernelLog,
  kReadKernelLogAround,
  kReadWorkerTraceback,
  kCollectOtherConsoles,

  // analyze/network.cc
  kNicOfGpu,
  kNicOfRank,
  kHcaOnNode,
  kHcaReportedDown,
  kSocketsReset,
  kOthersSawConnectionClosed,
  kCheckNetworkLink,
  kIbCompletionsFailed,
  kOthersNamedNode,
  kCheckNic,
  kFirstByOneEnd,
  kFirstByCounters,
  kFirstByWatchdogTime,
  kFirstByResetTime,
  kFirstByRetryTime,
  kFirstUnknownOneEnd,
  kFirstUnknownSocket,
  kFirstUnknownIb,
  kIbLinkOneEnd,
  kCollectFarHostLogs,
  kIbLink,
  kDrainIbLink,
  kSocketPathOneReset,
  kSocketPathBothReset,
  kSocketPathDropped,
  kTestSocketPath,
  kRanks,
  kOfItsRanksAmong,
  kOfItsRanks,
  kDuplicateGpu,
  kFixGpuAssignment,
  kBootstrapGaveUp,
  kCheckBootstrapRoute,
  kInterfaceMissing,
  kCheckInterfaces,
  kFarEndOfNode,
  kHcaOfGpu,
  kItsHca,
  kItsSocketInterface,
  kLinkEndOfRank,
  kLinkEndOfProcess,
  kFarPeerOfNode,
  kFarPeerUnknownHost,

  // analyze/baselines.cc, analyze/first_error.cc
  kRestartFromNewest,
  kNoRankedError,
  kLoudestRank,
  kNoRootCauseTable,
  kEarliestRootCause,
  kNoFlightRecorderVerdict,
  kFlightRecorderMissingRanks,
  kNoRasVerdict,
  kRasListedRanks,
  kNoWatchdogTimeout,
  kEarliestWatchdogTimeout,

  // analyze/straggler.cc, analyze/ib_ports.cc
  kStepStraggler,
  kCheckSlowRank,
  kSlowNicOfRank,
  kSlowNicOfGpu,
  kBelowUsualRate,
  kListComma,
  kXmitWaitRatio,
  kSymbolErrorsAfter,
  kLinkDownedAfter,
  kSlowNicSlowsCollectives,
  kRankByAllocationOrder,
  kCheckSlowPort,

  // analyze/fail_slow.cc
  kGpuFailedPcieTest,
  kPcieDowngraded,
  kHardwareConfirms,
  kClocksHeldDown,
  kThermalSlowdown,
  kPowerBrakeSlowdown,
  kHwSlowdown,
  kThrottleLine,
  kTemperature,
  kHardwareConfirmsClose,
  kComputedAsLongAs,
  kOwnStepsInControlRun,
  kMedianRank,
  kFromAbout,
  kSlowRanks,
  kFindSlowRanksNodes,
  kEverySlowRankOn,
  kDrainSlowNode,
  kSlowRankOn,
  kAlsoSlow,
  kGpuOfNode,
  kGpuOfRank,
  kCheckThrottledGpu,

  // analyze/hardware.cc
  kDiagFailedTest,
  kDiagFailedTestAlso,
  kDriverRecoveryAction,
  kRowRemapFailedHealth,
  kRowRemapFailedXid64,
  kGpuFellOffBus,
  kContainedMemoryError,
  kResetGpuAfterEcc,
  kResetGpuAfterNvlink,
  kResetGpuAfter,
  kRunCanary,
  kDiagFailedOnGpu,
  kHealthSnapshotShows,
  kVolatileUncorrectable,
  kFailedRowRemap,
  kRowRemapPending,
  kPageRetirementPending,
  kDcgmLastXid,
  kOnlyGpuWithMemoryFault,
  kLocalRanksGpuBy,
  kMemoryErrorWithoutXid,
  kRowRemapFailed,
  kResetGpuAfterMemoryError,
  kFallenOffBus,
  kXidCode,
  kOnlyGpuWithXid,
  kKernelLogShowsXid,
  kXidBurst,
  kDuringTheJob,
  kApplicationFaultByDriver,
  kGpuFailedUnderRank,
  kCodeAt,
  kNcclBusIdLine,
  kVisibleDeviceAt,
  kVisibleDeviceIndexCited,
  kVisibleDeviceIndex,
  kSmiIndex,
  kSmiTableSkipsIndex,
  kPidInXidLine,

  // analyze/participation.cc
  kThenSentence,
  kWaitingOnIt,
  kAndWaiting,
  kSemicolonWaiting,
  kRankOfNode,
  kRankOfNodeLocal,
  kCollectiveMismatch,
  kRayTrainingFunctionRaised,
  kExitedWith,
  kHostSaysWhy,
  kAfterRaising,
  kNodePrintedUnrankedError,
  kNodePrintedUnrankedErrors,
  kNodelessLogPrintedUnrankedError,
  kNodelessLogsPrintedUnrankedErrors,
  kWithoutPrintingError,
  kBeforeFirstTimeout,
  kWithinSkewOfFirstTimeout,
  kThenTimedOutOrTornDown,
  kNothingAboutPeersGloo,
  kSigtermDidNotEndIt,
  kStoppedParticipatingAt,
  kNoTimeoutOfItsOwn,
  kWhileWaiting,
  kAndRaised,
  kWhileRanksTimedOut,
  kAroundTime,
  kReadKernelLogForXid,
  kFindCudaErrorKernel,
  kLowerGpuMemory,
  kCheckKernelLogForKiller,
  kLowerPinnedMemory,
  kLowerRankHostMemory,
  kDrainNodeOfCudaError,
  kReadRankCoreDump,
  kFixMismatchedCollective,
  kFixRankException,
  kTakeRankStack,
  kTierHbm,
  kTierHost,
  kTierPinned,
  kBuildWaiters,
  kNodeIsTheAnswer,
  kNodeIsTheAnswerNodeless,
  kGpuOrCode,
  kHostMemoryAt,
  kStartedFirst,
  kSoleBlocker,
  kThenStoppedParticipating,
  kRestartWithoutSlowHardware,
  kRestartWholeJob,
  kUnrankedTimeoutsNote,
  kFewWaitOnLeader,
  kCollectLogsOfWaitedOnRank,
  kOnNode,
  kUnplacedLinkError,
  kCollectRankTiedLogs,
  kUnplacedMayLead,
  kCollectLogsOfUnplacedNodes,
  kOnNoPlacedNode,
  kOnNodes,
  kOnNodesAndUnplaced,
  kTiedOnNodeAgentLog,
  kTiedOnNodeNoAgentLog,
  kCollectLogsOfTiedNode,
  kWorldSizeStated,
  kNamedAsMembers,
  kNamedAsMembersAboveLogged,
  kNeverHeardFrom,
  kFindNodeOfRanks,
  kTiedOnNodes,
  kCollectLogsOfTiedNodes,
  kUnrankedTimeoutsOnly,
  kFewerTimeoutsOnNode,
  kSharedConsoleRanks,
  kOneOfThemRaised,
  kNoOwnErrorThere,
  kLastErrorAboutPeer,
  kVictimExit,
  kAgentSigkilledWorker,
  kInitiatorNotDetermined,
  kNoOneStandsOut,
  kNothingStopped,
  kUngroupedUnnamedTimeouts,

  // analyze/detectors.cc
  kRestartNothingFailed,

  // analyze/stall.cc
  kEveryRankStalled,
  kProgressStoppedFirst,
  kOthersReachedStep,
  kOthersWentOnUntil,
  kInspectWhileRunning,

  // analyze/participation.cc: what the Flight Recorder dumps say (analyze/flight_recorder.h)
  kFrOddCollective,
  kFrNeverJoined,
  kFrNoDump,
  // analyze/participation.cc: what the NCCL RAS reports say (analyze/nccl_ras.h)
  kRasDead,
  kRasSilent,
  kRasBehind,
  kRasStuck,
  kRasOdd,
  kRasBehindOnce,
  kRasMismatch,

  kCount,  // not a template: the number of them
};

struct ReasonPart;
struct Reason;

// A template's blank and its value: `{node}` in the words, {"node", "gpu-0003"} here. A value may
// itself be words to render: {"cited", Say(ReasonId::kXidAt, ...)}.
struct ReasonArg {
  ReasonArg(std::string_view blank, std::string text) : name(blank), value(std::move(text)) {}
  ReasonArg(std::string_view blank, const char* text) : name(blank), value(text) {}
  ReasonArg(std::string_view blank, const Reason& reason);

  std::string_view name;  // a literal
  std::string value;
  std::vector<ReasonPart> words;  // rendered in place of `value` when there are any
};

struct ReasonPart {
  ReasonId id = ReasonId::kVerbatim;
  std::vector<ReasonArg> args;
};

// Parts rendered one after the other, with nothing between them.
struct Reason {
  Reason() = default;
  // Words passed through as written (ReasonId::kVerbatim). engine/src builds no Reason this way
  // (its sentences are templates); these stay for the renderer's tests (tests/engine/
  // reasons_test.cc). A new sentence is a ReasonId, not words given here.
  Reason(std::string text) { *this += std::move(text); }   // NOLINT(google-explicit-constructor)
  Reason(const char* text) : Reason(std::string(text)) {}  // NOLINT(google-explicit-constructor)

  Reason& operator+=(std::string text) {
    parts.push_back({ReasonId::kVerbatim, {{"text", std::move(text)}}});
    return *this;
  }
  void Add(ReasonId id, std::vector<ReasonArg> args = {}) {
    parts.push_back({id, std::move(args)});
  }
  void Add(const Reason& more) { parts.insert(parts.end(), more.parts.begin(), more.parts.end()); }
  // The first part with template `from` takes template `to` (the same blanks, other words).
  void Replace(ReasonId from, ReasonId to) {
    for (ReasonPart& p : parts) {
      if (p.id == from) {
        p.id = to;
        return;
      }
    }
  }

  std::vector<ReasonPart> parts;
};

inline ReasonArg::ReasonArg(std::string_view blank, const Reason& reason)
    : name(blank), words(reason.parts) {}

// A reason of one part.
inline Reason Say(ReasonId id, std::vector<ReasonArg> args = {}) {
  Reason r;
  r.Add(id, std::move(args));
  return r;
}

}  // namespace denpex::engine
