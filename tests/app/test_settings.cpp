// The typed settings facade over an INI file: every setting has a valid default, values
// round-trip through the file, invalid ones are refused with a message and change
// nothing, a hand-edited bad value reads as the default, and the memory group becomes
// OffloadSettings the engine accepts.
#include <QTemporaryDir>
#include <QtTest>

#include "kiln/error.h"
#include "settings.h"

class TestSettings : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  std::unique_ptr<QSettings> store() const {
    return std::make_unique<QSettings>(dir_.filePath("kiln.ini"), QSettings::IniFormat);
  }

 private Q_SLOTS:
  void everyDefaultIsValid() {
    QVERIFY(kiln::app::settingSpecs().size() >= 20);
    for (const auto& spec : kiln::app::settingSpecs()) {
      const QString problem = kiln::app::Settings::check(spec, spec.default_value);
      QVERIFY2(problem.isEmpty(), qPrintable(spec.key + ": " + problem));
      QVERIFY2(!spec.description.isEmpty(), qPrintable(spec.key));
    }
    kiln::app::Settings s(store());
    const kiln::OffloadSettings o = s.offload();  // the defaults make a valid configuration
    QCOMPARE(o.mode, kiln::OffloadMode::None);
    QVERIFY(o.per_component.empty());
  }

  void firstStartIsDueOnlyOnAFreshStore() {
    QTemporaryDir dir;
    const auto at = [&](const char* name) {
      return kiln::app::Settings(
          std::make_unique<QSettings>(dir.filePath(name), QSettings::IniFormat));
    };
    QVERIFY(at("fresh.ini").firstStartDue());
    {
      kiln::app::Settings older = at("older.ini");  // settings from before the assistant
      QCOMPARE(older.set("memory/device", "sim:8G"), QString());
      QVERIFY(!older.firstStartDue());
      QCOMPARE(older.set("general/first_start", true), QString());  // turned on in Preferences
      QVERIFY(older.firstStartDue());
      QCOMPARE(older.set("general/first_start", false), QString());  // the assistant ran
      QVERIFY(!older.firstStartDue());
    }
  }

  // Every setting set to a value other than its default reads back the same from the
  // file after a restart (a copy of the file: QSettings keeps an open file parsed for the
  // whole process, so only a file it never saw is read from disk). The general/ keys once
  // came back empty: QSettings wrote them as [%General] and read them back as "General".
  void everySettingSurvivesARestart() {
    QTemporaryDir dir;
    const QString file = dir.filePath("kiln.conf"), copy = dir.filePath("restarted.conf");
    QMap<QString, QVariant> expected;
    {
      kiln::app::Settings s(std::make_unique<QSettings>(file, QSettings::IniFormat));
      for (const auto& spec : kiln::app::settingSpecs()) {
        QVariant v;
        switch (spec.type) {
          case kiln::app::SettingType::Bool:
            v = !spec.default_value.toBool();
            break;
          case kiln::app::SettingType::Int:
            v = spec.min + 1;
            break;
          case kiln::app::SettingType::Bytes:
            v = qint64{3} << 30;
            break;
          case kiln::app::SettingType::StringList:
            v = QStringList{"/models/a", "/models/b c"};
            break;
          case kiln::app::SettingType::Enum:
            v = spec.choices.last();
            break;
          case kiln::app::SettingType::Device:
            v = QString("sim:4G");
            break;
          case kiln::app::SettingType::String:
            v = QString("changed-{seed}");
            break;
        }
        QVERIFY(v != spec.default_value);
        QCOMPARE(s.set(spec.key, v), QString());
        expected.insert(spec.key, v);
      }
      QVERIFY(!s.firstStartDue());
    }
    QVERIFY(QFile::copy(file, copy));
    QFile text(copy);
    QVERIFY(text.open(QIODevice::ReadOnly));
    QVERIFY2(!text.readAll().contains("General"), "a [General] section loses its keys");
    kiln::app::Settings again(std::make_unique<QSettings>(copy, QSettings::IniFormat));
    for (auto it = expected.begin(); it != expected.end(); ++it)
      QVERIFY2(again.value(it.key()) == it.value(),
               qPrintable(it.key() + ": " + again.value(it.key()).toString() +
                          " != " + it.value().toString()));
    QVERIFY(!again.firstStartDue());
  }

  // A settings file written before the fix has its general settings under [%General]:
  // they are read and moved to where they are kept now.
  void readsGeneralSettingsOfEarlierFiles() {
    QTemporaryDir dir;
    const QString file = dir.filePath("old.conf");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "[%General]\nfirst_start=false\nmodel_folders=/m/a, /m/b\noutput_folder=/pictures/kiln\n\n"
        "[appearance]\ntheme=dark\n");
    f.close();
    {
      kiln::app::Settings s(std::make_unique<QSettings>(file, QSettings::IniFormat));
      QCOMPARE(s.outputFolder(), QString("/pictures/kiln"));
      QCOMPARE(s.modelFolders(), (QStringList{"/m/a", "/m/b"}));
      QVERIFY(!s.firstStartDue());
      QCOMPARE(s.value("appearance/theme").toString(), QString("dark"));
    }
    QVERIFY(QFile::copy(file, dir.filePath("again.conf")));
    kiln::app::Settings again(
        std::make_unique<QSettings>(dir.filePath("again.conf"), QSettings::IniFormat));
    QCOMPARE(again.outputFolder(), QString("/pictures/kiln"));
    QVERIFY(!again.firstStartDue());
  }

  void roundTripsThroughTheFile() {
    {
      kiln::app::Settings s(store());
      QCOMPARE(s.set("memory/offload_unet", "group-block"), QString());
      QCOMPARE(s.set("memory/blocks_per_group", 4), QString());
      QCOMPARE(s.set("memory/streams", true), QString());
      QCOMPARE(s.set("memory/pin_reserve", "512MiB"), QString());
      QCOMPARE(s.set("general/model_folders", QStringList{"/models/ComfyUI", "/models/webui"}),
               QString());
      QCOMPARE(s.set("memory/device", "sim:8G"), QString());
      QCOMPARE(s.set("lora/mode", "hook"), QString());
      QCOMPARE(s.set("memory/vae_tiling", "always"), QString());
    }
    kiln::app::Settings s(store());  // read back from the file
    const kiln::OffloadSettings o = s.offload();
    QCOMPARE(o.per_component.at("unet"), kiln::OffloadMode::GroupBlock);
    QCOMPARE(o.blocks_per_group, 4);
    QVERIFY(o.streams);
    QCOMPARE(o.pin_reserve_bytes, int64_t{512} << 20);
    QCOMPARE(s.modelFolders(), (QStringList{"/models/ComfyUI", "/models/webui"}));
    QCOMPARE(s.device(), QString("sim:8G"));
    QCOMPARE(s.loraMode(), kiln::LoraMode::Hook);
    QCOMPARE(s.vaeTiling(), kiln::VaeTiling::Always);
  }

  void refusesInvalidValues_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QVariant>("value");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown key") << "memory/warp_drive" << QVariant(1)
                                 << "no setting memory/warp_drive";
    QTest::newRow("out of range") << "memory/blocks_per_group" << QVariant(0)
                                  << "between 1 and 64, not 0";
    QTest::newRow("not a number") << "memory/tile_size" << QVariant("big")
                                  << "whole number, not 'big'";
    QTest::newRow("unknown choice")
        << "memory/offload_vae" << QVariant("sideways")
        << "one of none, model, group-block, group-leaf, balanced, not 'sideways'";
    QTest::newRow("bad size") << "memory/pin_reserve" << QVariant("lots") << "a size like 2G";
    QTest::newRow("bad device") << "memory/device" << QVariant("tpu:0")
                                << "cpu, cuda:N or sim:SIZE, not 'tpu:0'";
    QTest::newRow("not a bool") << "memory/streams" << QVariant("maybe") << "true or false";
  }
  void refusesInvalidValues() {
    QFETCH(QString, key);
    QFETCH(QVariant, value);
    QFETCH(QString, message);
    kiln::app::Settings s(store());
    const QVariant before = s.value(key);
    const QString problem = s.set(key, value);
    QVERIFY2(problem.contains(message), qPrintable(problem));
    QCOMPARE(s.value(key), before);
  }

  // A value edited by hand into something invalid reads as the default; a combination
  // the engine cannot run is refused where it is assembled.
  void badStoredValuesFallBack() {
    {
      QSettings raw(dir_.filePath("kiln.ini"), QSettings::IniFormat);
      raw.setValue("memory/tile_overlap", "-5");
      raw.setValue("memory/streams", "false");
      raw.setValue("memory/record_stream", "true");
    }
    kiln::app::Settings s(store());
    QCOMPARE(s.tileOverlap(), 64);
    try {
      (void)s.offload();
      QFAIL("record stream without streams was accepted");
    } catch (const kiln::Error& e) {
      QVERIFY2(QString(e.what()).contains("stream"), e.what());
    }
    s.reset("memory/record_stream");
    QVERIFY(!s.offload().record_stream);
  }
};

QTEST_GUILESS_MAIN(TestSettings)
#include "test_settings.moc"
