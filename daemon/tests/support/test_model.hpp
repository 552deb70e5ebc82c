#pragma once

#include <string>

namespace pstrain::testing {

// Writes a model file of Fashion-MNIST's shape and class names (one hidden layer of 32, seeded
// initial parameters) at `path` and returns `path`: what a model server needs to answer, where
// its answers need not be right.
std::string writeTestModel(const std::string& path);

}  // namespace pstrain::testing
