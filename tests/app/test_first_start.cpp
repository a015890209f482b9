// What the first start looks for and proposes: model folders of A1111, ComfyUI and
// InvokeAI found in a home folder laid out like a real one (and the checkpoints in them),
// GPUs read from nvidia-smi output and a sysfs tree, the memory preset proposed for each
// GPU size, and each preset's settings stored, valid and read back as OffloadSettings.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "kiln/error.h"
#include "machine_probe.h"
#include "memory_presets.h"
#include "model_list.h"
#include "settings.h"

using namespace kiln::app;

namespace {

constexpr qint64 kGiB = qint64{1} << 30;

void touch(const QString& path, const QByteArray& content = "x") {
  QDir().mkpath(QFileInfo(path).path());
  QFile f(path);
  QVERIFY2(f.open(QIODevice::WriteOnly), qPrintable(path));
  f.write(content);
}

// A safetensors file of one small tensor: what a checkpoint looks like to listing, which
// reads headers only.
void checkpoint(const QString& path) {
  const QByteArray header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  QByteArray length(8, '\0');
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<char>((static_cast<quint64>(header.size()) >> (8 * i)) & 0xff);
  touch(path, length + header + QByteArray(4, '\0'));
}

GpuInfo gpu(qint64 bytes) {
  return {"GPU", "NVIDIA", bytes};
}

}  // namespace

class TestFirstStart : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  void findsModelFoldersOfEachLayout() {
    const QString home = dir_.filePath("home");
    checkpoint(home + "/ComfyUI/models/checkpoints/sdxl.safetensors");
    checkpoint(home + "/ComfyUI/models/checkpoints/sd15/dream.safetensors");
    checkpoint(home + "/ComfyUI/models/loras/style.safetensors");
    checkpoint(home + "/AI/stable-diffusion-webui/models/Stable-diffusion/v1-5.safetensors");
    touch(home + "/invokeai/invokeai.yaml");
    checkpoint(home + "/invokeai/models/sdxl/main/juggernaut.safetensors");
    touch(home + "/invokeai/models/sd-1/main/photon/model_index.json", "{}");
    checkpoint(home + "/invokeai/models/sd-1/lora/detail.safetensors");
    touch(home + "/Downloads/models/readme.txt");  // a models/ folder of nothing Kiln knows
    touch(home +
          "/a/b/ComfyUI/models/checkpoints/deep.safetensors");  // three levels down: not looked at
    // A text file renamed: listed with the reason, not counted.
    touch(home + "/ComfyUI/models/checkpoints/notes.safetensors", "my favourite prompts\n");
    const QList<FoundModelFolder> found = findModelFolders({home, dir_.filePath("absent")});
    QCOMPARE(found.size(), 3);
    const auto find = [&](ModelLayout layout) {
      for (const FoundModelFolder& f : found)
        if (f.layout == layout) return f;
      return FoundModelFolder{};
    };
    QCOMPARE(find(ModelLayout::ComfyUI).path, home + "/ComfyUI");
    QCOMPARE(find(ModelLayout::ComfyUI).checkpoints,
             2);  // the LoRA and the text file are not checkpoints
    const QList<ModelChoice> comfy = findCheckpoints({home + "/ComfyUI"});
    QCOMPARE(comfy.size(), 3);
    for (const ModelChoice& c : comfy)
      QVERIFY2(c.problem.isEmpty() != (c.name == "notes"), qPrintable(c.name + ": " + c.problem));
    QVERIFY(checkpointProblem(home + "/ComfyUI/models/checkpoints/notes.safetensors")
                .contains("not a safetensors file"));
    QCOMPARE(find(ModelLayout::A1111).path, home + "/AI/stable-diffusion-webui");
    QCOMPARE(find(ModelLayout::A1111).checkpoints, 1);
    QCOMPARE(find(ModelLayout::InvokeAI).path, home + "/invokeai");
    QCOMPARE(find(ModelLayout::InvokeAI).checkpoints, 2);  // a single file and a diffusers folder
    // The model picker lists them by name from the InvokeAI tree.
    QStringList names;
    for (const ModelChoice& c : findCheckpoints({home + "/invokeai"})) names << c.name;
    QCOMPARE(names, (QStringList{"juggernaut", "photon"}));
    QCOMPARE(layoutName(ModelLayout::InvokeAI), QString("InvokeAI"));
    // A root that is itself a program's folder is found too, and each folder only once;
    // a program's folder is not searched below, also when it is given again as a root.
    QCOMPARE(findModelFolders({home + "/ComfyUI", home + "/ComfyUI/"}).size(), 1);
    touch(home + "/ComfyUI/custom_nodes/pack/models/checkpoints/bundled.safetensors");
    QCOMPARE(findModelFolders({home, home + "/ComfyUI"}).size(), 3);
    QVERIFY(usualModelSearchRoots().contains(QDir::homePath()));
  }

  void readsNvidiaSmi() {
    const QList<GpuInfo> gpus =
        parseNvidiaSmi("NVIDIA GeForce RTX 3060, 12288\nNVIDIA RTX A6000, 49140\n\ngarbage\n");
    QCOMPARE(gpus.size(), 2);
    QCOMPARE(gpus[0].name, QString("NVIDIA GeForce RTX 3060"));
    QCOMPARE(gpus[0].memory_bytes, 12 * kGiB);
    QCOMPARE(gpus[1].memory_bytes, qint64{49140} << 20);
    QVERIFY(parseNvidiaSmi("No devices were found\n").isEmpty());
  }

  void readsDiscreteGpusFromSysfs() {
    const QString sys = dir_.filePath("sys");
    const QString drm = sys + "/class/drm/";
    touch(drm + "card0/device/vendor", "0x1002\n");  // a discrete Radeon with 16 GiB
    touch(drm + "card0/device/device", "0x73bf\n");
    touch(drm + "card0/device/mem_info_vram_total", QByteArray::number(16 * kGiB) + "\n");
    touch(drm + "card0-DP-1/status", "connected\n");  // a connector, not a card
    touch(drm + "card1/device/vendor", "0x1002\n");   // integrated: a 512 MiB carve-out
    touch(drm + "card1/device/mem_info_vram_total", QByteArray::number(qint64{512} << 20));
    touch(drm + "card2/device/vendor", "0x8086\n");  // Intel
    touch(drm + "card3/device/vendor", "0x10de\n");  // NVIDIA: memory unknown without nvidia-smi
    touch(drm + "card3/device/device", "0x2504\n");
    const QList<GpuInfo> gpus = probeDrmGpus(sys);
    QCOMPARE(gpus.size(), 2);
    QCOMPARE(gpus[0].vendor, QString("AMD"));
    QCOMPARE(gpus[0].memory_bytes, 16 * kGiB);
    QCOMPARE(gpus[0].name, QString("AMD GPU 0x73bf"));
    QCOMPARE(gpus[1].vendor, QString("NVIDIA"));
    QCOMPARE(gpus[1].memory_bytes, qint64{0});
    QVERIFY(probeDrmGpus(dir_.filePath("no-sys")).isEmpty());
  }

  void proposesAPresetForTheMemory() {
    QCOMPARE(proposeMemoryPreset({}, true), MemoryPreset::Cpu);
    QCOMPARE(proposeMemoryPreset({gpu(24 * kGiB)}, false), MemoryPreset::Cpu);  // a CPU-only build
    QCOMPARE(proposeMemoryPreset({gpu(4 * kGiB)}, true), MemoryPreset::Upto6GB);
    QCOMPARE(proposeMemoryPreset({gpu(qint64{6144} << 20)}, true),
             MemoryPreset::Upto6GB);  // "6 GB"
    QCOMPARE(proposeMemoryPreset({gpu(0)}, true),
             MemoryPreset::Upto6GB);  // unknown: the careful one
    QCOMPARE(proposeMemoryPreset({gpu(8 * kGiB)}, true), MemoryPreset::Upto12GB);
    QCOMPARE(proposeMemoryPreset({gpu(qint64{12288} << 20)}, true), MemoryPreset::Upto12GB);
    QCOMPARE(proposeMemoryPreset({gpu(16 * kGiB)}, true), MemoryPreset::Over12GB);
    QCOMPARE(proposeMemoryPreset({gpu(4 * kGiB), gpu(24 * kGiB)}, true),
             MemoryPreset::Over12GB);  // the largest
  }

  void aPresetNamesTheGpuItWasProposedFor() {
    const QList<GpuInfo> gpus{
        {"small", "NVIDIA", 4 * kGiB}, {"radeon", "AMD", 16 * kGiB}, {"big", "NVIDIA", 24 * kGiB}};
    QCOMPARE(proposedGpuIndex(gpus), 1);  // the second NVIDIA card
    QCOMPARE(proposedGpuIndex({}), 0);
    QCOMPARE(presetDevice(true, "cpu", 1), QString("cuda:1"));
    QCOMPARE(presetDevice(false, "cuda:0", 1),
             QString("cpu"));  // never a device the build cannot open
    QCOMPARE(presetDevice(false, "sim:8G"), QString("sim:8G"));
  }

  void presetsStoreValidOffloadSettings() {
    struct Expect {
      MemoryPreset preset;
      kiln::OffloadMode mode, text_encoder, unet;
      kiln::VaeTiling tiling;
      QString device;
    };
    const QList<Expect> expected{
        {MemoryPreset::Cpu, kiln::OffloadMode::None, kiln::OffloadMode::None,
         kiln::OffloadMode::None, kiln::VaeTiling::Auto, "cpu"},
        {MemoryPreset::Upto6GB, kiln::OffloadMode::Balanced, kiln::OffloadMode::GroupLeaf,
         kiln::OffloadMode::Balanced, kiln::VaeTiling::Always, "sim:6G"},
        {MemoryPreset::Upto12GB, kiln::OffloadMode::Balanced, kiln::OffloadMode::GroupLeaf,
         kiln::OffloadMode::Balanced, kiln::VaeTiling::Auto, "sim:6G"},
        {MemoryPreset::Over12GB, kiln::OffloadMode::None, kiln::OffloadMode::None,
         kiln::OffloadMode::None, kiln::VaeTiling::Auto, "sim:6G"},
    };
    QCOMPARE(expected.size(), memoryPresets().size());
    for (const Expect& e : expected) {
      const QString key = memoryPresetKey(e.preset);
      MemoryPreset parsed;
      QVERIFY(parseMemoryPreset(key, &parsed));
      QCOMPARE(parsed, e.preset);
      QVERIFY(!memoryPresetTitle(e.preset).isEmpty());
      QVERIFY(!memoryPresetDescription(e.preset).isEmpty());
      Settings s(std::make_unique<QSettings>(dir_.filePath(key + ".ini"), QSettings::IniFormat));
      QCOMPARE(s.set("memory/offload", "group-block"), QString());  // changed by the preset
      QCOMPARE(applyMemoryPreset(s, e.preset, "sim:6G"), QString());
      const kiln::OffloadSettings o = s.offload();  // validates
      QCOMPARE(o.mode, e.mode);
      const auto mode_of = [&](const char* c) {
        return o.per_component.count(c) ? o.per_component.at(c) : o.mode;
      };
      QCOMPARE(mode_of("text_encoder"), e.text_encoder);
      QCOMPARE(mode_of("unet"), e.unet);
      QCOMPARE(s.vaeTiling(), e.tiling);
      QCOMPARE(s.device(), e.device);
      QCOMPARE(o.streams, e.preset != MemoryPreset::Cpu);
    }
    MemoryPreset unused;
    QVERIFY(!parseMemoryPreset("huge", &unused));
  }

  void aRefusedPresetStoresNothing() {
    Settings s(std::make_unique<QSettings>(dir_.filePath("refused.ini"), QSettings::IniFormat));
    QVERIFY(!applyMemoryPreset(s, MemoryPreset::Upto6GB, "tpu:0").isEmpty());  // not a device
    QCOMPARE(s.value("memory/offload").toString(), QString("none"));
    QCOMPARE(s.device(), QString("cpu"));
  }
};

QTEST_GUILESS_MAIN(TestFirstStart)
#include "test_first_start.moc"
