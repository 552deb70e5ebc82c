#define BOOST_TEST_MODULE wire_encoding
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "pstrain/common/error.hpp"
#include "pstrain/net/wire_encoding.hpp"
#include "pstrain/ps/answer_encoder.hpp"

// The lossy wire encodings (net::WireEncoding) and the ps's answers in them (ps::AnswerEncoder):
// sizes, what each keeps, error feedback that loses nothing over time, and a worker's copy that
// stays bit for bit the ps's.

using namespace pstrain;
using net::WireEncoding;

namespace {

const std::vector<WireEncoding> kLossy{WireEncoding::kBf16, WireEncoding::kQ8, WireEncoding::kQ4,
                                       WireEncoding::kQ3, WireEncoding::kQ2, WireEncoding::kLog4};

std::vector<float> randomValues(size_t count, unsigned seed, float spread = 1e-3f) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0, spread);
  std::vector<float> values(count);
  for (auto& value : values) value = normal(random);
  return values;
}

std::vector<float> decoded(WireEncoding encoding, const std::vector<std::uint32_t>& words,
                           size_t count) {
  std::vector<float> values(count);
  net::decodeValues(encoding, words.data(), count, values.data(), false);
  return values;
}

// The levels either side of zero of a qN encoding; 0 for the others.
int quantizedLevels(WireEncoding encoding) {
  switch (encoding) {
    case WireEncoding::kQ8: return 127;
    case WireEncoding::kQ4: return 7;
    case WireEncoding::kQ3: return 3;
    case WireEncoding::kQ2: return 1;
    default: return 0;
  }
}

float largest(const std::vector<float>& values) {
  float most = 0;
  for (float value : values) most = std::max(most, std::fabs(value));
  return most;
}

// A shard's parameters as the Shard keeps them: a read-only buffer per update.
ps::Shard::Params makeParams(const std::vector<float>& values) {
  auto buffer = std::shared_ptr<float>(new float[values.size()], std::default_delete<float[]>());
  std::copy(values.begin(), values.end(), buffer.get());
  return buffer;
}

std::vector<float> received(const ps::AnswerEncoder::Encoded& answer, std::vector<float> copy) {
  std::vector<std::uint32_t> words(answer.words);
  std::memcpy(words.data(), answer.values, answer.words * sizeof(float));
  net::decodeValues(answer.encoding, words.data(), copy.size(), copy.data(),
                    answer.encoding != WireEncoding::kFp32);
  return copy;
}

}  // namespace

BOOST_AUTO_TEST_CASE(encodings_take_the_words_of_their_bits_and_block_scales) {
  // A block of 128 values: q4 16 words of codes and a scale, q3 12, q2 8, bf16 64 words.
  BOOST_TEST(net::encodedWords(WireEncoding::kFp32, 1000) == 1000u);
  BOOST_TEST(net::encodedWords(WireEncoding::kBf16, 128) == 64u);
  BOOST_TEST(net::encodedWords(WireEncoding::kQ8, 128) == 33u);
  BOOST_TEST(net::encodedWords(WireEncoding::kQ4, 128) == 17u);
  BOOST_TEST(net::encodedWords(WireEncoding::kQ3, 128) == 13u);
  BOOST_TEST(net::encodedWords(WireEncoding::kQ2, 128) == 9u);
  // A last, partial block takes a whole one.
  BOOST_TEST(net::encodedWords(WireEncoding::kQ4, 129) == 34u);
  BOOST_TEST(net::encodedWords(WireEncoding::kQ2, 0) == 0u);
  // The 784-128-10 model's 101,770 parameters, pushed q4 and pulled q2: 8 times fewer bytes.
  const size_t model = 101770;
  const size_t words = net::encodedWords(WireEncoding::kQ4, model) +
                       net::encodedWords(WireEncoding::kQ2, model);
  BOOST_TEST(words * 4 * 8 <= 2 * model * 4);
}

BOOST_AUTO_TEST_CASE(names_read_back_and_unknown_bytes_are_refused) {
  for (auto encoding : {WireEncoding::kFp32, WireEncoding::kBf16, WireEncoding::kQ8,
                        WireEncoding::kQ4, WireEncoding::kQ3, WireEncoding::kQ2,
                        WireEncoding::kLog4}) {
    BOOST_TEST((net::parseWireEncoding(net::encodingName(encoding)) == encoding));
    BOOST_TEST((net::wireEncodingFromByte(std::uint8_t(encoding)) == encoding));
  }
  BOOST_TEST(!net::parseWireEncoding("q5").has_value());
  BOOST_CHECK_THROW(net::wireEncodingFromByte(7), ProtocolError);
}

BOOST_AUTO_TEST_CASE(fp32_is_exact_and_sends_everything) {
  auto values = randomValues(300, 1);
  const auto original = values;
  std::vector<std::uint32_t> words(net::encodedWords(WireEncoding::kFp32, values.size()));
  net::encodeValues(WireEncoding::kFp32, values.data(), nullptr, values.size(), words.data());
  BOOST_TEST(decoded(WireEncoding::kFp32, words, 300) == original);
  BOOST_TEST(largest(values) == 0.0f);  // nothing left unsent
}

BOOST_AUTO_TEST_CASE(what_a_lossy_encoding_does_not_send_is_left_in_the_values) {
  for (auto encoding : kLossy) {
    BOOST_TEST_CONTEXT(net::encodingName(encoding)) {
      // 300 values: two whole blocks and a partial one, of different scales.
      auto values = randomValues(300, 2);
      for (size_t i = 128; i < 256; ++i) values[i] *= 100;
      const auto original = values;
      std::vector<std::uint32_t> words(net::encodedWords(encoding, values.size()));
      net::encodeValues(encoding, values.data(), nullptr, values.size(), words.data());
      const auto sent = decoded(encoding, words, values.size());
      for (size_t i = 0; i < values.size(); ++i) {
        // Sent plus left is what there was, to float rounding.
        BOOST_TEST(std::fabs(sent[i] + values[i] - original[i]) <= 1e-6f * std::fabs(original[i]) + 1e-12f);
      }
      // Each block's remainder within half a step of its levels (qN's step in the block's first
      // word); bf16's and log4's relative to the block's largest.
      const size_t blockWords = net::encodedWords(encoding, 128);
      for (size_t block = 0; block < 3; ++block) {
        const size_t begin = block * 128, end = std::min<size_t>(300, begin + 128);
        float most = 0;
        for (size_t i = begin; i < end; ++i) most = std::max(most, std::fabs(original[i]));
        const int levels = quantizedLevels(encoding);
        float step;
        std::memcpy(&step, &words[block * blockWords], sizeof step);
        for (size_t i = begin; i < end; ++i) {
          if (levels == 0) {
            const float bound = encoding == WireEncoding::kLog4 ? most / 4 : most / 256;
            BOOST_TEST(std::fabs(values[i]) <= bound * 1.0002f);
          } else {
            BOOST_TEST(step == most / float(levels));
            BOOST_TEST(std::fabs(values[i]) <= step * 0.5001f);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(error_feedback_loses_nothing_over_many_pushes) {
  // The same gradient pushed 200 times, each with what the last left: what arrives sums to
  // 200 times the gradient, less what is still to send, which stays within one block's level.
  const size_t count = 1000;
  const auto gradient = randomValues(count, 3);
  for (auto encoding : kLossy) {
    BOOST_TEST_CONTEXT(net::encodingName(encoding)) {
      std::vector<float> unsent(count, 0.0f), arrived(count, 0.0f);
      std::vector<std::uint32_t> words(net::encodedWords(encoding, count));
      for (int push = 0; push < 200; ++push) {
        net::encodeValues(encoding, unsent.data(), gradient.data(), count, words.data());
        net::decodeValues(encoding, words.data(), count, arrived.data(), true);
      }
      for (size_t i = 0; i < count; ++i) {
        BOOST_TEST(std::fabs(arrived[i] + unsent[i] - 200 * gradient[i]) <= 1e-4f * 200 * 4e-3f);
        BOOST_TEST(std::fabs(unsent[i]) <= 2 * largest(gradient));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fp32_answers_are_the_shards_parameters_as_they_are) {
  ps::AnswerEncoder encoder(WireEncoding::kFp32, 10);
  const auto params = makeParams(randomValues(10, 4));
  const auto answer = encoder.encode(nullptr, params);
  BOOST_TEST((answer.encoding == WireEncoding::kFp32));
  BOOST_TEST(answer.values == params.get());  // no copy
  BOOST_TEST(answer.words == 10u);
}

BOOST_AUTO_TEST_CASE(a_workers_copy_follows_the_parameters_and_its_error_does_not_grow) {
  const size_t count = 1000;
  for (auto encoding : {WireEncoding::kQ2, WireEncoding::kQ4}) {
    BOOST_TEST_CONTEXT(net::encodingName(encoding)) {
      ps::AnswerEncoder encoder(encoding, count);
      auto now = randomValues(count, 5, 0.1f);
      auto first = encoder.encode(nullptr, makeParams(now));
      BOOST_TEST((first.encoding == WireEncoding::kFp32));  // the first answer is whole
      auto copy = received(first, std::vector<float>(count));
      BOOST_TEST(copy == now);
      ps::AnswerEncoder::Copy held = first.after;
      float worst = 0;
      for (int step = 0; step < 300; ++step) {
        const auto update = randomValues(count, 100 + unsigned(step), 1e-3f);
        for (size_t i = 0; i < count; ++i) now[i] -= update[i];
        const auto answer = encoder.encode(held, makeParams(now));
        BOOST_TEST((answer.encoding == encoding));
        copy = received(answer, copy);
        held = answer.after;
        // The worker's copy is the ps's record of it, bit for bit.
        BOOST_TEST(std::equal(copy.begin(), copy.end(), held.get()));
        float error = 0;
        for (size_t i = 0; i < count; ++i) error = std::max(error, std::fabs(copy[i] - now[i]));
        if (step >= 100) worst = std::max(worst, error);
      }
      // Within a few steps' updates (each about 1e-3), not accumulated over 300.
      BOOST_TEST(worst < 5e-3f);
      // Parameters that stop changing are reached: each answer sends the rest.
      for (int again = 0; again < 40; ++again) {
        const auto answer = encoder.encode(held, makeParams(now));
        copy = received(answer, copy);
        held = answer.after;
      }
      for (size_t i = 0; i < count; ++i) BOOST_TEST(std::fabs(copy[i] - now[i]) <= 1e-7f);
    }
  }
}

BOOST_AUTO_TEST_CASE(workers_holding_one_copy_share_one_encoding_and_a_newcomer_joins_them) {
  ps::AnswerEncoder encoder(WireEncoding::kQ2, 500);
  const auto start = makeParams(randomValues(500, 6));
  const auto a = encoder.encode(nullptr, start);
  const auto b = encoder.encode(nullptr, start);
  BOOST_TEST(a.after == b.after);  // the same copy: the same chain from here on
  auto next = randomValues(500, 7);
  const auto stepped = makeParams(next);
  const auto toA = encoder.encode(a.after, stepped);
  const auto toB = encoder.encode(b.after, stepped);
  BOOST_TEST(toA.values == toB.values);  // encoded once
  BOOST_TEST(toA.after == toB.after);
  // A worker new at these parameters is given the others' copy whole, and shares from then on.
  const auto newcomer = encoder.encode(nullptr, stepped);
  BOOST_TEST((newcomer.encoding == WireEncoding::kFp32));
  BOOST_TEST(newcomer.after == toA.after);
  BOOST_TEST(std::equal(toA.after.get(), toA.after.get() + 500, newcomer.values));
  // Another worker's copy at other parameters gets an encoding of its own.
  const auto other = encoder.encode(a.after, makeParams(next));
  BOOST_TEST(other.after != toA.after);
}
