package quiet

// Off's decision for a payload and an environment given, for the tests in
// package quiet_test (which import the hooks' own lookups, and through them
// this package).
var OffFor = off

// Member is member, for the same tests.
var Member = member

// Names are the file names the probes look for.
var Names = [...]string{tasksFile, activeMarker, runtimeDir, judgedFile, logStampFile, progressFile, sessionsDir, runtimePrefix}

// JudgedFile and JudgedFormat name a kept judgement and head its text.
const JudgedFile, JudgedFormat = judgedFile, judgedFormat
