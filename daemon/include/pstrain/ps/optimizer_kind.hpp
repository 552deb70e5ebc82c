#pragma once

namespace pstrain::ps {

// The update rule a ps applies to its parameters.
enum class OptimizerKind { kAdam, kSgd };

}  // namespace pstrain::ps
