#define BOOST_TEST_MODULE completion_record
#include <boost/test/unit_test.hpp>

#include "pstrain/app/completion_record.hpp"
#include "pstrain/common/error.hpp"
#include "support/idx_files.hpp"

using namespace pstrain;
using namespace pstrain::testing;

BOOST_AUTO_TEST_CASE(a_completed_run_is_found_again_and_another_run_is_not) {
  TempDir dir;
  BOOST_TEST(!app::completedGlobalStep(dir.path(), 7).has_value());
  app::recordCompletion(dir.path(), 7, 3000);
  BOOST_TEST(app::completedGlobalStep(dir.path(), 7).value_or(0) == 3000u);
  BOOST_TEST(!app::completedGlobalStep(dir.path(), 8).has_value());
}

BOOST_AUTO_TEST_CASE(a_corrupt_record_is_refused_naming_the_file) {
  TempDir dir;
  writeFile(dir.file("completed.json"), "{\"run_id\": \"7\", \"global_st");
  try {
    app::completedGlobalStep(dir.path(), 7);
    BOOST_FAIL("expected IoError");
  } catch (const IoError& e) {
    BOOST_TEST(std::string(e.what()).find(dir.file("completed.json")) != std::string::npos);
  }
}
