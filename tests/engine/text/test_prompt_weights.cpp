// Prompt emphasis syntax, with the cases A1111 documents for its parser (and a few more):
// nesting multiplies, unclosed brackets run to the end, escapes are literal characters,
// BREAK separates windows.
#include <QtTest>

#include "models/text/prompt_weights.h"

using kiln::models::WeightedText;

Q_DECLARE_METATYPE(std::vector<WeightedText>)

namespace {

std::string show(const std::vector<WeightedText>& runs) {
  std::string out;
  for (const auto& r : runs)
    out += r.is_break ? std::string("[BREAK] ")
                      : "['" + r.text + "', " + std::to_string(r.weight) + "] ";
  return out;
}

}  // namespace

class TestPromptWeights : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void parses_data() {
    QTest::addColumn<QString>("prompt");
    QTest::addColumn<std::vector<WeightedText>>("want");
    const auto row = [](const char* name, const char* prompt, std::vector<WeightedText> want) {
      QTest::newRow(name) << QString::fromUtf8(prompt) << want;
    };
    row("plain", "normal text", {{"normal text", 1.0, false}});
    row("round", "an (important) word",
        {{"an ", 1.0, false}, {"important", 1.1, false}, {" word", 1.0, false}});
    row("unbalanced", "(unbalanced", {{"unbalanced", 1.1, false}});
    row("escaped", "\\(literal\\]", {{"(literal]", 1.0, false}});
    row("merged", "(unnecessary)(parens)", {{"unnecessaryparens", 1.1, false}});
    row("nested", "a (((house:1.3)) [on] a (hill:0.5), sun, (((sky))).",
        {{"a ", 1.0, false},
         {"house", 1.3 * 1.1 * 1.1, false},
         {" ", 1.1, false},
         {"on", 1 / 1.1 * 1.1, false},
         {" a ", 1.1, false},
         {"hill", 0.5 * 1.1, false},
         {", sun, ", 1.1, false},
         {"sky", 1.1 * 1.1 * 1.1 * 1.1, false},
         {".", 1.1, false}});
    row("square", "[quiet] loud", {{"quiet", 1 / 1.1, false}, {" loud", 1.0, false}});
    row("spaces in weight", "(red: 1.5 )", {{"red", 1.5, false}});
    row("colon without bracket", "time: 12:30", {{"time: 12:30", 1.0, false}});
    row("weight without bracket", "x:1.2)", {{"x:1.2)", 1.0, false}});
    row("stray closers", "a) b]", {{"a) b]", 1.0, false}});
    row("break", "a cat BREAK a dog",
        {{"a cat", 1.0, false}, {"", -1.0, true}, {"a dog", 1.0, false}});
    row("not a break", "BREAKFAST", {{"BREAKFAST", 1.0, false}});
    row("empty", "", {{"", 1.0, false}});
  }
  void parses() {
    QFETCH(QString, prompt);
    QFETCH(std::vector<WeightedText>, want);
    const std::vector<WeightedText> got = kiln::models::parsePromptWeights(prompt.toStdString());
    QVERIFY2(got.size() == want.size(), (show(got) + "vs " + show(want)).c_str());
    for (std::size_t i = 0; i < got.size(); ++i) {
      QCOMPARE(got[i].text, want[i].text);
      QCOMPARE(got[i].is_break, want[i].is_break);
      if (!got[i].is_break)
        QVERIFY2(std::abs(got[i].weight - want[i].weight) < 1e-12, show(got).c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestPromptWeights)
#include "test_prompt_weights.moc"
