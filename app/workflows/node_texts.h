// The node schemas' texts (node, parameter and port names, categories) in the chosen
// language. They come from the engine in English; their translations are in the context
// "kiln::app::Workflow", listed in node_texts.cpp so that lupdate finds them.
#pragma once

#include <QString>

#include <string>
#include <string_view>

namespace kiln::app {

QString nodeText(const std::string& text);
// A node category as a heading, capitalised ("Loaders"), in the interface's language.
QString nodeCategoryText(const std::string& category);
// Whether `text` is listed for translation (a test checks every built-in schema's texts).
bool nodeTextListed(std::string_view text);

}  // namespace kiln::app
