#pragma once

#include <chrono>
#include <string>

namespace pstrain {

// Replaces `path` with `contents` so that readers see the old file or the new one, never a part:
// writes a temporary file beside it, fsyncs it, renames it over `path`. Throws IoError
// (DiskFullError where the disk had no room), leaving no temporary file. `failpoint`, if given,
// names the failpoint (common/failpoint.hpp) between the sync and the rename.
void writeFileAtomically(const std::string& path, const std::string& contents,
                         const char* failpoint = nullptr);

// As writeFileAtomically, for a run's results (its model, summary and completion record): a full
// disk is waited out, trying again every 250 ms for up to `patience`, so that a disk full for a
// while as the run ends loses none of them. Throws DiskFullError after that.
void writeFileWhenRoom(const std::string& path, const std::string& contents,
                       std::chrono::milliseconds patience = std::chrono::seconds(60));

}  // namespace pstrain
