// KernelCmaWithoutRegions: no CMA region captured is 0 only for a kernel without CMA.
#include "accounting/kernel_cma_kb.h"

#include <gtest/gtest.h>

namespace memfleet::accounting {
namespace {

TEST(KernelCmaKbTest, NoCmaTotalMeansNoCma) {
  EXPECT_EQ(KernelCmaWithoutRegions(std::nullopt).kernel_cma_kb, Kb(0));
  EXPECT_EQ(KernelCmaWithoutRegions(0).kernel_cma_kb, Kb(0));
  EXPECT_FALSE(KernelCmaWithoutRegions(0).warning.has_value());
}

// The OPLUS phone: CmaTotal 4182016 kB, no CMA sysfs, debugfs not mounted.
TEST(KernelCmaKbTest, CmaTotalButNoRegionIsNull) {
  CmaWithoutRegions c = KernelCmaWithoutRegions(4182016);
  EXPECT_FALSE(c.kernel_cma_kb.has_value());
  ASSERT_TRUE(c.warning.has_value());
  EXPECT_NE(c.warning->find("CmaTotal 4182016 kB"), std::string::npos) << *c.warning;
  EXPECT_EQ(c.source.rfind("unavailable:", 0), 0u);
}

}  // namespace
}  // namespace memfleet::accounting
