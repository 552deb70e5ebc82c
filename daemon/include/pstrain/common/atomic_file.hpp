#pragma once

#include <string>

namespace pstrain {

// Replaces `path` with `contents` so that readers see the old file or the new one, never a part:
// writes a temporary file beside it, fsyncs it, renames it over `path`. Throws IoError.
// `failpoint`, if given, names the failpoint (common/failpoint.hpp) between the sync and the
// rename.
void writeFileAtomically(const std::string& path, const std::string& contents,
                         const char* failpoint = nullptr);

}  // namespace pstrain
