// The engine's texts for people (stage names, units of progress, the placement of a
// model's weights) in the interface's language. The engine speaks English; these are the
// phrases it uses, translated where they are shown. Anything unknown stays as it is.
#pragma once

#include <QString>

namespace kiln::ui {

// "Denoising image 2 of 3" -> its translation; a workflow stage's " (title)" is kept.
QString stageText(const QString& stage);
// "12/30 steps", "1.2/2.0 GB" with the unit translated.
QString progressAmountText(qint64 done, qint64 total, const QString& unit);
// "group-block, 1 block per group, no streams, pinned" -> each phrase translated.
QString placementText(const QString& placement);

}  // namespace kiln::ui
