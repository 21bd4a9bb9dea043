#include "accounting/graphics_libraries.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace memfleet::accounting {
namespace {

// docs/accounting.md section 5, copied from it by origin group.
const std::map<std::string, std::vector<std::string>>& SpecList() {
  static const auto* const kList = new std::map<std::string, std::vector<std::string>>{
      {"android",
       {"libhwui", "libgui", "libEGL", "libGLESv1_CM", "libGLESv2", "libvulkan", "libui", "libskia", "libnativewindow",
        "android.hardware.graphics.allocator-V2-ndk", "android.hardware.graphics.bufferqueue@",
        "android.hardware.graphics.composer@", "android.hardware.graphics.composer3"}},
      {"qcom",
       {"libGLESv2_adreno", "vulkan.adreno", "libadreno_", "libgsl", "libCB", "libRCC", "libllvm-qgl", "libllvm-glnext",
        "mapper.qti", "libgrallocutilsng", "libgralloc.qti", "libgralloc.system.qti", "libgralloccore",
        "vendor.qti.hardware.display.snapalloc-impl", "vendor.qti.hardware.display.config", "libsdmcore",
        "libsdmextension", "libqservice", "eglSubDriverAndroid"}},
      {"mtk",
       {"libGLES_mali", "vulkan.mali", "libmtk_mali", "mapper.mediatek", "libgralloc_extra", "libmtk_drvb",
        "libmtk_colortm"}},
      {"xring",
       {"libGLES_mali", "vulkan.mali", "mapper.xring", "vendor.xring.hardware.display.composerext",
        "vendor.xring.hardware.gamingplus"}},
      {"oem",
       {"vendor.xiaomi.hardware.display.mihwcextension", "vendor.xiaomi.hardware.displayfeature@",
        "vendor.xiaomi.hardware.displayfeature_aidl", "vendor.xiaomi.hardware.framecapturemanager",
        "vendor.xiaomi.hardware.framemaster", "vendor.xiaomi.hardware.pqservice", "vendor.xiaomi.hardware.prepqservice",
        "libpqservice", "libprepqservice", "libxdmcore", "libxdmresourcemanager", "vendor.honor.hardware.hwdisplay",
        "vendor.honor.hardware.graphics.hwcinterface@", "vendor.honor.hardware.graphics.mediacomm@",
        "vendor.honor.hardware.pixelworks_display@", "vendor.honor.hardware.pixelworks_feature@",
        "vendor.honor.hardware.airenderlaunch"}},
  };
  return *kList;
}

TEST(GraphicsLibrariesTest, BuiltinListParses) {
  absl::StatusOr<GraphicsLibraries> libs = GraphicsLibraries::Parse(BuiltinGraphicsLibrariesText());
  ASSERT_TRUE(libs.ok()) << libs.status();
  EXPECT_FALSE(libs->entries().empty());
  // Default() is that same list.
  EXPECT_EQ(GraphicsLibraries::Default().entries().size(), libs->entries().size());
}

TEST(GraphicsLibrariesTest, BuiltinListIsTheSpecList) {
  std::set<std::pair<std::string, std::string>> builtin;
  for (const GraphicsLibraries::Entry& e : GraphicsLibraries::Default().entries()) {
    builtin.emplace(e.group, e.prefix);
  }
  std::set<std::pair<std::string, std::string>> spec;
  for (const auto& [group, prefixes] : SpecList()) {
    for (const std::string& p : prefixes) spec.emplace(group, p);
  }
  // Every spec name in its group, and nothing the spec does not name.
  EXPECT_EQ(builtin, spec);
  for (const auto& [group, prefixes] : SpecList()) {
    for (const std::string& p : prefixes) {
      EXPECT_TRUE(GraphicsLibraries::Default().MatchesBaseName(p + ".so")) << group << ": " << p;
    }
  }
}

TEST(GraphicsLibrariesTest, PrefixSemantics) {
  const GraphicsLibraries& libs = GraphicsLibraries::Default();
  EXPECT_TRUE(libs.MatchesBaseName("libGLESv2_adreno.so"));
  EXPECT_TRUE(libs.MatchesBaseName("libgui_foo"));  // starts with libgui
  EXPECT_TRUE(libs.MatchesBaseName("libgui.so"));
  EXPECT_TRUE(libs.MatchesBaseName("android.hardware.graphics.composer@2.4.so"));
  EXPECT_TRUE(libs.MatchesBaseName("libadreno_utils.so"));
  EXPECT_FALSE(libs.MatchesBaseName("libadreno.so"));  // the prefix is "libadreno_"
  EXPECT_FALSE(libs.MatchesBaseName("mylibgui.so"));   // prefix, not substring
  EXPECT_FALSE(libs.MatchesBaseName("LIBGUI.so"));     // case-sensitive
  EXPECT_FALSE(libs.MatchesBaseName("libc.so"));
  EXPECT_FALSE(libs.MatchesBaseName(""));
  EXPECT_FALSE(libs.MatchesBaseName("libgu"));  // shorter than every prefix it starts
}

TEST(GraphicsLibrariesTest, PathMatchesOnBaseName) {
  const GraphicsLibraries& libs = GraphicsLibraries::Default();
  EXPECT_TRUE(libs.MatchesPath("/system/lib64/libgui.so"));
  EXPECT_TRUE(libs.MatchesPath("/vendor/lib64/egl/libGLES_mali.so"));
  EXPECT_TRUE(libs.MatchesPath("libhwui.so"));
  // The directory is not the name: ".../libgui/" dirs and "mylibgui" names do not count.
  EXPECT_FALSE(libs.MatchesPath("/data/libgui/libc.so"));
  EXPECT_FALSE(libs.MatchesPath("/system/lib64/mylibgui.so"));
  EXPECT_FALSE(libs.MatchesPath("/system/lib64/libgui/"));
  EXPECT_FALSE(libs.MatchesPath(""));
  EXPECT_FALSE(libs.MatchesPath("[anon:libc_malloc]"));
}

TEST(GraphicsLibrariesTest, ParseFormat) {
  absl::StatusOr<GraphicsLibraries> libs = GraphicsLibraries::Parse(
      "# a lab list\n"
      "libfirst\n"
      "\n"
      "[lab]\n"
      "  libLabGfx  \n"
      "# comment inside\n"
      "[other]\n"
      "vendor.lab.display@\n");
  ASSERT_TRUE(libs.ok()) << libs.status();
  ASSERT_EQ(libs->entries().size(), 3u);
  EXPECT_EQ(libs->entries()[0].group, "");
  EXPECT_EQ(libs->entries()[0].prefix, "libfirst");
  EXPECT_EQ(libs->entries()[1].group, "lab");
  EXPECT_EQ(libs->entries()[1].prefix, "libLabGfx");
  EXPECT_EQ(libs->entries()[2].group, "other");
  EXPECT_TRUE(libs->MatchesPath("/vendor/lib64/vendor.lab.display@1.0.so"));
  EXPECT_FALSE(libs->MatchesPath("/system/lib64/libgui.so"));  // only what the file lists

  absl::StatusOr<GraphicsLibraries> empty = GraphicsLibraries::Parse("");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->MatchesBaseName("libgui.so"));
}

TEST(GraphicsLibrariesTest, ParseErrorsNameTheLine) {
  absl::StatusOr<GraphicsLibraries> libs = GraphicsLibraries::Parse("libgui\nlib gui\n");
  EXPECT_EQ(libs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(libs.status().message()).find("line 2"), std::string::npos) << libs.status();

  libs = GraphicsLibraries::Parse("libgui\n[qcom\nlibgsl\n");
  EXPECT_EQ(libs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(libs.status().message()).find("line 2"), std::string::npos) << libs.status();

  EXPECT_EQ(GraphicsLibraries::Parse("[]\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GraphicsLibraries::Parse("/system/lib64/libgui\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GraphicsLibraries::Parse("libgui\tlibhwui\n").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memfleet::accounting
