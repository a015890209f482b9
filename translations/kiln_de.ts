<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+52"/>
        <source>One per line</source>
        <translation>Eins pro Zeile</translation>
    </message>
</context>
<context>
    <name>kiln::app::EngineBridge</name>
    <message>
        <location filename="../app/bridge/engine_bridge.cpp" line="+120"/>
        <source>(no prompt)</source>
        <translation>(kein Prompt)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 · image %2 of %3 · seed %4</source>
        <translation>%1 · Bild %2 von %3 · Seed %4</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 · %2 images · seed %3</source>
        <translation>%1 · %2 Bilder · Seed %3</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 · seed %2</source>
        <translation>%1 · Seed %2</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Started %1</source>
        <translation>Gestartet: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Refused %1: %2</source>
        <translation>Abgelehnt: %1: %2</translation>
    </message>
    <message numerus="yes">
        <location line="+19"/>
        <source>Skip: %1 finishes, %n later image(s) of its batch dropped</source>
        <translation>
            <numerusform>Überspringen: %1 wird fertig, %n weiteres Bild des Stapels entfällt</numerusform>
            <numerusform>Überspringen: %1 wird fertig, %n weitere Bilder des Stapels entfallen</numerusform>
        </translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Removed %1 from the queue</source>
        <translation>%1 aus der Warteschlange entfernt</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Removed %1 waiting requests</source>
        <translation>%1 wartende Aufträge entfernt</translation>
    </message>
    <message>
        <location line="+97"/>
        <source>Finished %1</source>
        <translation>Fertig: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the workflow ran but made no picture: give it a SaveImage or PreviewImage node</source>
        <translation>der Workflow lief, ergab aber kein Bild: er braucht einen SaveImage- oder PreviewImage-Knoten</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Saved %1</source>
        <translation>Gespeichert: %1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Failed %1: %2</source>
        <translation>Fehlgeschlagen: %1: %2</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Stopped %1 (%2)</source>
        <translation>Abgebrochen: %1 (%2)</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>There is no image to save yet.</source>
        <translation>Es gibt noch kein Bild zum Speichern.</translation>
    </message>
</context>
<context>
    <name>kiln::app::MemoryPresets</name>
    <message>
        <location filename="../app/settings/memory_presets.cpp" line="+49"/>
        <source>CPU only</source>
        <translation>Nur CPU</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPU with up to 6 GB</source>
        <translation>GPU mit bis zu 6 GB</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPU with 6 to 12 GB</source>
        <translation>GPU mit 6 bis 12 GB</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPU with more than 12 GB</source>
        <translation>GPU mit mehr als 12 GB</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Everything computes in host memory; nothing is moved between memories.</source>
        <translation>Alles rechnet im Hauptspeicher; nichts wird zwischen Speichern verschoben.</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Weights stream to the GPU in groups as they are needed, text encoders layer by layer, and the VAE always works in tiles. Slower, but large models fit.</source>
        <translation>Gewichte werden gruppenweise zur GPU übertragen, wenn sie gebraucht werden, Text-Encoder Schicht für Schicht, und das VAE arbeitet immer in Kacheln. Langsamer, aber auch große Modelle passen.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The denoiser keeps on the GPU what fits and streams the rest in groups (FLUX.1&apos;s transformer fits this way); text encoders stream layer by layer (T5-XXL); the VAE moves to the GPU whole while it runs and works in tiles when a picture would not fit.</source>
        <translation>Der Entrauscher behält auf der GPU, was passt, und lädt den Rest gruppenweise nach (so passt der Transformer von FLUX.1); Text-Encoder werden Schicht für Schicht geladen (T5-XXL); das VAE wandert für seine Arbeit ganz auf die GPU und arbeitet in Kacheln, wenn ein Bild nicht hineinpasst.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Every model stays on the GPU: the fastest, for cards with room for them.</source>
        <translation>Alle Modelle bleiben auf der GPU: am schnellsten, für Karten mit genug Platz.</translation>
    </message>
    <message>
        <location line="+87"/>
        <source>Kiln has no setting %1</source>
        <translation>Kiln hat keine Einstellung %1</translation>
    </message>
</context>
<context>
    <name>kiln::app::ModelList</name>
    <message>
        <location filename="../app/settings/model_list.cpp" line="+82"/>
        <source>a folder without model_index.json</source>
        <translation>ein Ordner ohne model_index.json</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>it cannot be read</source>
        <translation>sie kann nicht gelesen werden</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>it is too short to be a safetensors file</source>
        <translation>sie ist zu kurz für eine safetensors-Datei</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>it is not a safetensors file (its header length does not fit the file)</source>
        <translation>sie ist keine safetensors-Datei (die Länge ihres Kopfes passt nicht zur Datei)</translation>
    </message>
    <message>
        <location line="+7"/>
        <location line="+9"/>
        <source>its header is not safetensors JSON</source>
        <translation>ihr Kopf ist kein safetensors-JSON</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>it is cut short: tensor %1 lies beyond its end (an unfinished download?)</source>
        <translation>sie ist abgeschnitten: Tensor %1 liegt hinter ihrem Ende (ein unvollständiger Download?)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>it holds no tensors</source>
        <translation>sie enthält keine Tensoren</translation>
    </message>
</context>
<context>
    <name>kiln::app::Settings</name>
    <message>
        <location filename="../app/settings/settings.cpp" line="+62"/>
        <source>Folders searched for checkpoints, LoRAs and VAEs, including ComfyUI and A1111 model trees</source>
        <translation>Ordner, in denen Checkpoints, LoRAs und VAEs gesucht werden, auch Modellordner von ComfyUI und A1111</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Where results are saved</source>
        <translation>Wo Ergebnisse gespeichert werden</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Names of saved files: {date}, {time}, {seed}, {model} are filled in</source>
        <translation>Namen gespeicherter Dateien: {date}, {time}, {seed}, {model} werden eingesetzt</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Show the first-start assistant (model folders, memory preset) when Kiln starts</source>
        <translation>Beim Start von Kiln den Einrichtungsassistenten zeigen (Modellordner, Speichervorgabe)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Where to compute: cpu, cuda:N (takes effect when Kiln starts)</source>
        <translation>Wo gerechnet wird: cpu, cuda:N (wirkt beim nächsten Start von Kiln)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>How weights move between host and device memory</source>
        <translation>Wie Gewichte zwischen Host- und Gerätespeicher wandern</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Offload mode of the text encoders</source>
        <translation>Auslagerungsmodus der Text-Encoder</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Offload mode of the UNet</source>
        <translation>Auslagerungsmodus des UNet</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Offload mode of the VAE</source>
        <translation>Auslagerungsmodus des VAE</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Blocks moved together in group-block mode</source>
        <translation>Im Modus group-block gemeinsam verschobene Blöcke</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Prefetch the next group while the current one runs</source>
        <translation>Die nächste Gruppe laden, während die aktuelle läuft</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Record tensors on the side stream (needs streams)</source>
        <translation>Tensoren auf dem Nebenstream vermerken (braucht Streams)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Offloaded weights in pinned host memory</source>
        <translation>Ausgelagerte Gewichte in gepinntem Hostspeicher</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Host memory pinning leaves free</source>
        <translation>Hostspeicher, den das Pinnen frei lässt</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Components never offloaded</source>
        <translation>Nie ausgelagerte Komponenten</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Components always offloaded</source>
        <translation>Immer ausgelagerte Komponenten</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>VAE decode and encode in tiles</source>
        <translation>VAE-Dekodierung und -Kodierung in Kacheln</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>VAE tile size in pixels (0: the largest that fits)</source>
        <translation>VAE-Kachelgröße in Pixeln (0: die größte, die passt)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Overlap of VAE tiles in pixels</source>
        <translation>Überlappung der VAE-Kacheln in Pixeln</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Device memory kept free for work beside the weights</source>
        <translation>Gerätespeicher, der neben den Gewichten für die Arbeit frei bleibt</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>How LoRAs reach the weights</source>
        <translation>Wie LoRAs auf die Gewichte wirken</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Language of the interface</source>
        <translation>Sprache der Oberfläche</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Colour theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Interpolate enlarged pictures instead of showing their pixels as blocks</source>
        <translation>Vergrößerte Bilder glätten, statt ihre Pixel als Blöcke zu zeigen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The generate panel&apos;s workflow and values when Kiln last closed</source>
        <translation>Workflow und Werte der Generieren-Leiste beim letzten Beenden von Kiln</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Where that workflow came from</source>
        <translation>Woher dieser Workflow stammt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Whether the generate panel draws a new seed for every Generate</source>
        <translation>Ob die Generieren-Leiste für jedes Generieren einen neuen Seed zieht</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Model folders</source>
        <translation>Modellordner</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Output folder</source>
        <translation>Ausgabeordner</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>File names</source>
        <translation>Dateinamen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>First-start assistant</source>
        <translation>Einrichtungsassistent</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offload</source>
        <translation>Auslagerung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encoders</source>
        <translation>Text-Encoder</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>UNet</source>
        <translation>UNet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE</source>
        <translation>VAE</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Blocks per group</source>
        <translation>Blöcke pro Gruppe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Streams</source>
        <translation>Streams</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Record stream</source>
        <translation>Stream vermerken</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pinned memory</source>
        <translation>Gepinnter Speicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pinned memory reserve</source>
        <translation>Reserve beim Pinnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Never offload</source>
        <translation>Nie auslagern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Always offload</source>
        <translation>Immer auslagern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE tiling</source>
        <translation>VAE-Kacheln</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile size</source>
        <translation>Kachelgröße</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile overlap</source>
        <translation>Kachelüberlappung</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Working memory reserve</source>
        <translation>Arbeitsspeicher-Reserve</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Apply mode</source>
        <translation>Anwendungsmodus</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Smooth scaling</source>
        <translation>Weiches Skalieren</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>System language</source>
        <translation>Sprache des Systems</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>As the system</source>
        <translation>Wie das System</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>%1 must be true or false</source>
        <translation>%1 muss true oder false sein</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 must be a whole number, not &apos;%2&apos;</source>
        <translation>%1 muss eine ganze Zahl sein, nicht &apos;%2&apos;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 must be between %2 and %3, not %4</source>
        <translation>%1 muss zwischen %2 und %3 liegen, nicht %4</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 must be a size like 2G or 512MiB, not &apos;%2&apos;</source>
        <translation>%1 muss eine Größe wie 2G oder 512MiB sein, nicht &apos;%2&apos;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 must be between %2 and %3</source>
        <translation>%1 muss zwischen %2 und %3 liegen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 must be one of %2, not &apos;%3&apos;</source>
        <translation>%1 muss eins von %2 sein, nicht &apos;%3&apos;</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 must be cpu, cuda:N or sim:SIZE, not &apos;%2&apos;</source>
        <translation>%1 muss cpu, cuda:N oder sim:GRÖSSE sein, nicht &apos;%2&apos;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must be a list of names</source>
        <translation>%1 muss eine Liste von Namen sein</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must not be empty</source>
        <translation>%1 darf nicht leer sein</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 is a file name, not a path: &apos;%2&apos; has a folder separator</source>
        <translation>%1 ist ein Dateiname, kein Pfad: &apos;%2&apos; enthält ein Ordnertrennzeichen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 has an unknown type</source>
        <translation>%1 hat einen unbekannten Typ</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Kiln has no setting %1</source>
        <translation>Kiln hat keine Einstellung %1</translation>
    </message>
</context>
<context>
    <name>kiln::app::Workflow</name>
    <message>
        <location filename="../app/workflows/node_texts.cpp" line="+52"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+28"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Negative prompt</source>
        <translation>Negativer Prompt</translation>
    </message>
    <message>
        <location filename="../app/workflows/node_texts.cpp" line="-19"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+10"/>
        <source>Guidance</source>
        <translation>Führung</translation>
    </message>
    <message>
        <location line="+30"/>
        <location filename="../app/workflows/template_workflow.cpp" line="-8"/>
        <source>Sampler</source>
        <translation>Sampler</translation>
    </message>
    <message>
        <location line="+7"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <location line="+2"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location line="-55"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>CFG scale</source>
        <translation>CFG-Skala</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Aesthetic score</source>
        <translation>Ästhetik-Wert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Base shift</source>
        <translation>Grundverschiebung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Batch size</source>
        <translation>Stapelgröße</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>CLIP-L text</source>
        <translation>CLIP-L-Text</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint</source>
        <translation>Checkpoint</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Clip skip</source>
        <translation>CLIP-Skip</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compute precision</source>
        <translation>Rechengenauigkeit</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conditioning</source>
        <translation>Konditionierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Crop left</source>
        <translation>Zuschnitt links</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Crop top</source>
        <translation>Zuschnitt oben</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Denoise</source>
        <translation>Entrauschen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty latent</source>
        <translation>Leerer Latent</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty video latent</source>
        <translation>Leeres Video-Latent</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>File name prefix</source>
        <translation>Dateinamenpräfix</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Flux guidance</source>
        <translation>FLUX-Führung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Format</source>
        <translation>Format</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Frame rate</source>
        <translation>Bildrate</translation>
    </message>
    <message>
        <location line="+1"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+8"/>
        <source>Frames</source>
        <translation>Bilder</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Image</source>
        <translation>Bild</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Images</source>
        <translation>Bilder</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Job&apos;s mask</source>
        <translation>Maske des Auftrags</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Job&apos;s picture</source>
        <translation>Bild des Auftrags</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Latent</source>
        <translation>Latent</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load LoRA</source>
        <translation>LoRA laden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load LoRA (model only)</source>
        <translation>LoRA laden (nur Modell)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load VAE</source>
        <translation>VAE laden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load checkpoint</source>
        <translation>Checkpoint laden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load image</source>
        <translation>Bild laden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load mask</source>
        <translation>Maske laden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Load video model</source>
        <translation>Videomodell laden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mask</source>
        <translation>Maske</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mask feather</source>
        <translation>Maskenweichzeichnung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Max shift</source>
        <translation>Höchste Verschiebung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mode</source>
        <translation>Modus</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Model sampling (FLUX)</source>
        <translation>Modell-Sampling (FLUX)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model strength</source>
        <translation>Modellstärke</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Negative</source>
        <translation>Negativ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Original height</source>
        <translation>Originalhöhe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Original width</source>
        <translation>Originalbreite</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Path</source>
        <translation>Pfad</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Positive</source>
        <translation>Positiv</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Prediction</source>
        <translation>Vorhersage</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Preview image</source>
        <translation>Bildvorschau</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Quality</source>
        <translation>Qualität</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save image</source>
        <translation>Bild speichern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save image as</source>
        <translation>Bild speichern unter</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save video</source>
        <translation>Video speichern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save video as</source>
        <translation>Video speichern unter</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Schedule</source>
        <translation>Zeitplan</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Second text encoder</source>
        <translation>Zweiter Text-Encoder</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Shift</source>
        <translation>Verschiebung</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Strength schedule</source>
        <translation>Stärkeverlauf</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>T5 text</source>
        <translation>T5-Text</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text</source>
        <translation>Text</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encode</source>
        <translation>Text kodieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encode (FLUX)</source>
        <translation>Text kodieren (FLUX)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encoder</source>
        <translation>Text-Encoder</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text encoder strength</source>
        <translation>Text-Encoder-Stärke</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile overlap</source>
        <translation>Kachelüberlappung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tile size</source>
        <translation>Kachelgröße</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tiling</source>
        <translation>Kacheln</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE</source>
        <translation>VAE</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE decode</source>
        <translation>VAE-Dekodierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE encode</source>
        <translation>VAE-Kodierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <location filename="../app/workflows/template_workflow.cpp" line="-4"/>
        <source>Width</source>
        <translation>Breite</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zero terminal SNR</source>
        <translation>Null-SNR am Ende</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>conditioning</source>
        <translation>Konditionierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>image</source>
        <translation>Bild</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>latent</source>
        <translation>Latent</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>loaders</source>
        <translation>Laden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sampling</source>
        <translation>Sampling</translation>
    </message>
    <message>
        <location line="-58"/>
        <location filename="../app/workflows/template_workflow.cpp" line="+2"/>
        <source>Height</source>
        <translation>Höhe</translation>
    </message>
</context>
<context>
    <name>kiln::app::WorkflowDocument</name>
    <message>
        <location filename="../app/editor/workflow_document.cpp" line="+62"/>
        <source>%1 takes a whole number</source>
        <translation>%1 nimmt eine ganze Zahl</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 takes a number</source>
        <translation>%1 nimmt eine Zahl</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 takes a finite number</source>
        <translation>%1 nimmt eine endliche Zahl</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 is on or off</source>
        <translation>%1 ist an oder aus</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 is one of the listed choices</source>
        <translation>%1 ist eine der aufgeführten Möglichkeiten</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 takes text</source>
        <translation>%1 nimmt Text</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 must be between %2 and %3</source>
        <translation>%1 muss zwischen %2 und %3 liegen</translation>
    </message>
    <message>
        <location line="+66"/>
        <location line="+234"/>
        <source>Kiln has no node type %1</source>
        <translation>Kiln hat keinen Knotentyp %1</translation>
    </message>
    <message>
        <location line="-223"/>
        <source>Add %1</source>
        <translation>%1 hinzufügen</translation>
    </message>
    <message>
        <location line="+10"/>
        <location line="+25"/>
        <source>None of those nodes is in the workflow</source>
        <translation>Keiner dieser Knoten ist im Workflow</translation>
    </message>
    <message>
        <location line="-14"/>
        <source>Delete node</source>
        <translation>Knoten löschen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delete %1 nodes</source>
        <translation>%1 Knoten löschen</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Move</source>
        <translation>Verschieben</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+15"/>
        <source>There is no node %1</source>
        <translation>Es gibt keinen Knoten %1</translation>
    </message>
    <message>
        <location line="-11"/>
        <source>%1 has no parameter %2</source>
        <translation>%1 hat keinen Parameter %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Set %1</source>
        <translation>%1 setzen</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Rename node</source>
        <translation>Knoten umbenennen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Select the nodes to group first</source>
        <translation>Wählen Sie zuerst die Knoten zum Gruppieren aus</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Group</source>
        <translation>Gruppe</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+8"/>
        <location line="+8"/>
        <source>There is no such group</source>
        <translation>Diese Gruppe gibt es nicht</translation>
    </message>
    <message>
        <location line="-13"/>
        <source>Ungroup</source>
        <translation>Gruppierung aufheben</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Rename group</source>
        <translation>Gruppe umbenennen</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 is not a colour of the form #rrggbb</source>
        <translation>%1 ist keine Farbe der Form #rrggbb</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Colour group</source>
        <translation>Gruppe einfärben</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Both ends must be nodes of the workflow</source>
        <translation>Beide Enden müssen Knoten des Workflows sein</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A node cannot feed itself</source>
        <translation>Ein Knoten kann sich nicht selbst speisen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 has no output %2</source>
        <translation>%1 hat keinen Ausgang %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 has no input %2</source>
        <translation>%1 hat keinen Eingang %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The output gives %1 and the input takes %2</source>
        <translation>Der Ausgang liefert %1, der Eingang nimmt %2</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>That link would make a cycle</source>
        <translation>Diese Verbindung ergäbe einen Kreis</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Connect</source>
        <translation>Verbinden</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Nothing is connected there</source>
        <translation>Dort ist nichts verbunden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Disconnect</source>
        <translation>Trennen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>There is no parameter %1 on node %2</source>
        <translation>Knoten %2 hat keinen Parameter %1</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>That parameter is not shown in the generate panel</source>
        <translation>Dieser Parameter wird in der Erzeugen-Leiste nicht gezeigt</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Show in the generate panel</source>
        <translation>In der Erzeugen-Leiste zeigen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Hide from the generate panel</source>
        <translation>Aus der Erzeugen-Leiste nehmen</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>The clipboard holds no Kiln nodes: %1</source>
        <translation>Die Zwischenablage enthält keine Kiln-Knoten: %1</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>The clipboard holds no nodes</source>
        <translation>Die Zwischenablage enthält keine Knoten</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Paste</source>
        <translation>Einfügen</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::DoubleField</name>
    <message>
        <location filename="../ui/number_fields.cpp" line="+101"/>
        <source>%1 is above the most, %2</source>
        <translation>%1 liegt über dem Höchstwert %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 is below the least, %2</source>
        <translation>%1 liegt unter dem Mindestwert %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1: set to %2</source>
        <translation>%1: auf %2 gesetzt</translation>
    </message>
</context>
<context>
    <name>kiln::ui::EngineTexts</name>
    <message>
        <location filename="../ui/engine_texts.cpp" line="+21"/>
        <source>Encoding prompt</source>
        <translation>Prompt wird kodiert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Encoding image</source>
        <translation>Bild wird kodiert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Encoding video</source>
        <translation>Video wird kodiert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Loading model</source>
        <translation>Modell wird geladen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Loading VAE</source>
        <translation>VAE wird geladen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Denoising</source>
        <translation>Entrauschen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Decoding</source>
        <translation>Dekodieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Saving</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tile passes</source>
        <translation>Kacheldurchgänge</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>files</source>
        <translation>Dateien</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tensors</source>
        <translation>Tensoren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>prompts</source>
        <translation>Prompts</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>frames</source>
        <translation>Frames</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>encoders</source>
        <translation>Encoder</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>streams</source>
        <translation>Streams</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no streams</source>
        <translation>keine Streams</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>back to the host after each call</source>
        <translation>nach jedem Aufruf zurück in den Hauptspeicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pinned</source>
        <translation>gepinnt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pinned per group</source>
        <translation>je Gruppe gepinnt</translation>
    </message>
    <message>
        <location line="+18"/>
        <source> image %1 of %2</source>
        <translation> Bild %1 von %2</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>%1 block(s) per group</source>
        <translation>%1 Block/Blöcke je Gruppe</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 resident</source>
        <translation>%1 resident</translation>
    </message>
</context>
<context>
    <name>kiln::ui::FirstStartWizard</name>
    <message>
        <location filename="../ui/first_start_wizard.cpp" line="+27"/>
        <source>memory unknown</source>
        <translation>Speicher unbekannt</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Welcome to Kiln</source>
        <translation>Willkommen bei Kiln</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Skip</source>
        <translation>Überspringen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Your models</source>
        <translation>Ihre Modelle</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No A1111, ComfyUI or InvokeAI model folders were found. Kiln&apos;s starter model is ready to use; add folders of your own checkpoints here or later in Preferences.</source>
        <translation>Es wurden keine Modellordner von A1111, ComfyUI oder InvokeAI gefunden. Das Startmodell von Kiln ist einsatzbereit; Ordner mit eigenen Checkpoints können Sie hier oder später in den Einstellungen hinzufügen.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Kiln found the model folders of these programs. Checked folders are searched for checkpoints, LoRAs and VAEs; the files stay where they are.</source>
        <translation>Kiln hat die Modellordner dieser Programme gefunden. In den angehakten Ordnern wird nach Checkpoints, LoRAs und VAEs gesucht; die Dateien bleiben, wo sie sind.</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1: %2 (1 checkpoint)</source>
        <translation>%1: %2 (1 Checkpoint)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2 (%3 checkpoints)</source>
        <translation>%1: %2 (%3 Checkpoints)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Add folder...</source>
        <translation>Ordner hinzufügen...</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>%1 (proposed)</source>
        <translation>%1 (vorgeschlagen)</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Every one of these settings can be changed later in Preferences.</source>
        <translation>Jede dieser Einstellungen lässt sich später in den Einstellungen ändern.</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>%1: %2 (%3)</source>
        <translation>%1: %2 (%3)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>cpu: the processor (slow; for machines without a usable GPU)</source>
        <translation>cpu: der Prozessor (langsam; für Rechner ohne nutzbare GPU)</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Compute on</source>
        <translation>Rechnen auf</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>No GPU was found: Kiln computes on the CPU.</source>
        <translation>Keine GPU gefunden: Kiln rechnet auf der CPU.</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Found: %1.</source>
        <translation>Gefunden: %1.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This build of Kiln computes on the CPU only, so the CPU preset is proposed.</source>
        <translation>Dieser Build von Kiln rechnet nur auf der CPU, daher wird die CPU-Vorgabe vorgeschlagen.</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>Model folder</source>
        <translation>Modellordner</translation>
    </message>
</context>
<context>
    <name>kiln::ui::GalleryPanel</name>
    <message>
        <location filename="../ui/gallery_panel.cpp" line="+63"/>
        <source>Show</source>
        <translation>Anzeigen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show the selected result in the viewer</source>
        <translation>Das gewählte Ergebnis in der Ansicht zeigen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reuse settings</source>
        <translation>Einstellungen übernehmen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fill the generate panel with the selected result&apos;s prompt and settings</source>
        <translation>Prompt und Einstellungen des gewählten Ergebnisses in die Erzeugen-Leiste übernehmen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Read the output folder again</source>
        <translation>Den Ausgabeordner neu einlesen</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>seed %1</source>
        <translation>Seed %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1
seed %2</source>
        <translation>%1
Seed %2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::IntField</name>
    <message>
        <location filename="../ui/number_fields.cpp" line="-35"/>
        <source>%1 is above the most, %2</source>
        <translation>%1 liegt über dem Höchstwert %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 is below the least, %2</source>
        <translation>%1 liegt unter dem Mindestwert %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 is not a multiple of %2</source>
        <translation>%1 ist kein Vielfaches von %2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1: set to %2</source>
        <translation>%1: auf %2 gesetzt</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="+354"/>
        <source>Kiln</source>
        <translation>Kiln</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Generate</source>
        <translation>Generieren</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Save As…</source>
        <translation>Speichern unter…</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Interrupt the render (Esc)</source>
        <translation>Das Rendern unterbrechen (Esc)</translation>
    </message>
    <message>
        <location line="-199"/>
        <source>Idle</source>
        <translation>Bereit</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>Memory settings ignored: %1</source>
        <translation>Speichereinstellungen ignoriert: %1</translation>
    </message>
    <message>
        <location line="+131"/>
        <source>&amp;Edit</source>
        <translation>&amp;Bearbeiten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Preferences…</source>
        <translation>&amp;Einstellungen…</translation>
    </message>
    <message>
        <location line="-84"/>
        <source>Starting…</source>
        <translation>Starte…</translation>
    </message>
    <message>
        <location line="-126"/>
        <source>Computing on the CPU: %1</source>
        <translation>Es wird auf der CPU gerechnet: %1</translation>
    </message>
    <message>
        <location line="+95"/>
        <source>The last session&apos;s settings cannot be restored: %1</source>
        <translation>Die Einstellungen der letzten Sitzung lassen sich nicht wiederherstellen: %1</translation>
    </message>
    <message numerus="yes">
        <location line="+15"/>
        <source>Skipped: this image finishes, %n later image(s) dropped</source>
        <translation>
            <numerusform>Übersprungen: dieses Bild wird fertig, %n weiteres Bild entfällt</numerusform>
            <numerusform>Übersprungen: dieses Bild wird fertig, %n weitere Bilder entfallen</numerusform>
        </translation>
    </message>
    <message>
        <location line="+78"/>
        <source>This file is not a workflow: it is not JSON and carries no workflow in its metadata</source>
        <translation>Diese Datei ist kein Workflow: Sie ist kein JSON und trägt keinen Workflow in ihren Metadaten</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Default &amp;Video Workflow</source>
        <translation>Standard-&amp;Video-Workflow</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Save Image As…</source>
        <translation>Bild &amp;speichern unter…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Zoom &amp;In</source>
        <translation>Ver&amp;größern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zoom &amp;Out</source>
        <translation>Ver&amp;kleinern</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Fit to Window</source>
        <translation>An &amp;Fenster anpassen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Actual Pixels</source>
        <translation>&amp;Originalgröße</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Smooth Scaling</source>
        <translation>&amp;Weiches Skalieren</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Interpolate enlarged pictures instead of showing their pixels as blocks</source>
        <translation>Vergrößerte Bilder glätten, statt ihre Pixel als Blöcke zu zeigen</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Batch count</source>
        <translation>Anzahl Bilder</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Images rendered one after another, seed, seed + 1, …</source>
        <translation>Bilder nacheinander, mit Seed, Seed + 1, …</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>text to video (built in)</source>
        <translation>Text zu Video (eingebaut)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>FLUX.1 text to image (built in)</source>
        <translation>FLUX.1 Text zu Bild (eingebaut)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Render with these settings (Ctrl+Enter); while a render runs, queue another</source>
        <translation>Mit diesen Einstellungen erzeugen (Strg+Eingabe); während einer läuft, einen weiteren einreihen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Interrupt</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Skip</source>
        <translation>Überspringen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Finish the current image and drop the rest of its batch</source>
        <translation>Das aktuelle Bild fertigstellen und den Rest der Serie verwerfen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Queue</source>
        <translation>Warteschlange</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gallery</source>
        <translation>Galerie</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Log</source>
        <translation>Protokoll</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+64"/>
        <location line="+111"/>
        <source>Default workflow</source>
        <translation>Standard-Workflow</translation>
    </message>
    <message>
        <location line="-107"/>
        <source>The starter model is missing. Choose a model.</source>
        <translation>Das Startermodell fehlt. Bitte ein Modell wählen.</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Video workflow: choose a video model (Wan 2.1)</source>
        <translation>Video-Workflow: Wählen Sie ein Videomodell (Wan 2.1)</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>%1 cannot run</source>
        <translation>%1 kann nicht laufen</translation>
    </message>
    <message>
        <location line="+8"/>
        <location line="+3"/>
        <location line="+4"/>
        <source>Cannot open %1</source>
        <translation>%1 lässt sich nicht öffnen</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>there is not enough memory to read it</source>
        <translation>es ist nicht genug Speicher da, um sie zu lesen</translation>
    </message>
    <message>
        <location line="+75"/>
        <source>FLUX.1 workflow</source>
        <translation>FLUX.1-Workflow</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Save image</source>
        <translation>Bild speichern</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>PNG images (*.png)</source>
        <translation>PNG-Bilder (*.png)</translation>
    </message>
    <message>
        <location line="-102"/>
        <location line="+105"/>
        <source>Saving failed</source>
        <translation>Speichern fehlgeschlagen</translation>
    </message>
    <message>
        <location line="-316"/>
        <source>&amp;Open Workflow…</source>
        <translation>Workflow ö&amp;ffnen…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save &amp;Workflow As…</source>
        <translation>&amp;Workflow speichern unter…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Default Workflow</source>
        <translation>&amp;Standard-Workflow</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>&amp;Workflow Editor</source>
        <translation>&amp;Workflow-Editor</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;First-Start Assistant…</source>
        <translation>&amp;Einrichtungsassistent…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;About Kiln</source>
        <translation>Ü&amp;ber Kiln</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>About Kiln</source>
        <translation>Über Kiln</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;p&gt;&lt;b&gt;Kiln %1&lt;/b&gt;&lt;/p&gt;&lt;p&gt;Local image and video generation with diffusion models.&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;Kiln %1&lt;/b&gt;&lt;/p&gt;&lt;p&gt;Lokale Bild- und Videoerzeugung mit Diffusionsmodellen.&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>The device changes to %1 when Kiln starts again</source>
        <translation>Das Gerät wechselt beim nächsten Start von Kiln zu %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Workflow: %1</source>
        <translation>Workflow: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>text to image (built in)</source>
        <translation>Text zu Bild (eingebaut)</translation>
    </message>
    <message>
        <location line="-88"/>
        <location line="+8"/>
        <location line="+179"/>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Opened %1</source>
        <translation>%1 geöffnet</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Open workflow</source>
        <translation>Workflow öffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Workflows and pictures (*.json *.png)</source>
        <translation>Workflows und Bilder (*.json *.png)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Save workflow</source>
        <translation>Workflow speichern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kiln workflows (*.json)</source>
        <translation>Kiln-Workflows (*.json)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>workflow editor</source>
        <translation>Workflow-Editor</translation>
    </message>
    <message>
        <location line="+122"/>
        <source>Workflow of %1 reopened</source>
        <translation>Workflow von %1 wieder geöffnet</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The workflow in %1 cannot be read (%2); using its recorded settings</source>
        <translation>Der Workflow in %1 ist nicht lesbar (%2); seine gespeicherten Einstellungen werden verwendet</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 records no settings to reuse</source>
        <translation>%1 enthält keine Einstellungen zum Übernehmen</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Settings of %1 reused</source>
        <translation>Einstellungen von %1 übernommen</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>No translation for &apos;%1&apos;: the interface stays in English</source>
        <translation>Keine Übersetzung für &apos;%1&apos;: die Oberfläche bleibt englisch</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Image %1 of %2 · %3</source>
        <translation>Bild %1 von %2 · %3</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> · %1%</source>
        <translation> · %1 %</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · estimating the time left</source>
        <translation> · Restzeit wird geschätzt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · about %1 s left</source>
        <translation> · noch etwa %1 s</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · %1 waiting</source>
        <translation> · %1 wartend</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Failed</source>
        <translation>Fehlgeschlagen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
    <message>
        <location line="-16"/>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <location line="-109"/>
        <source>Cannot show %1</source>
        <translation>%1 lässt sich nicht anzeigen</translation>
    </message>
    <message>
        <location line="+88"/>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Done. Note: %1</source>
        <translation>Fertig. Hinweis: %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MemoryBar</name>
    <message>
        <location filename="../ui/memory_map.cpp" line="+51"/>
        <source>Left: %1 of %2</source>
        <translation>Frei: %1 von %2</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none</source>
        <translation>nichts</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MemoryMapView</name>
    <message>
        <location line="+116"/>
        <source>Working memory for</source>
        <translation>Arbeitsspeicher für</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>frames</source>
        <translation>Bilder</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>native</source>
        <translation>nativ</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The picture size the working memory is for; native: each model&apos;s own</source>
        <translation>Die Bildgröße, für die der Arbeitsspeicher gilt; nativ: die des jeweiligen Modells</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A video model&apos;s clip length; native: the model&apos;s own</source>
        <translation>Die Cliplänge eines Videomodells; nativ: die des Modells</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>No map for these settings: %1</source>
        <translation>Keine Übersicht für diese Einstellungen: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The engine has not said yet what its device holds.</source>
        <translation>Die Engine hat noch nicht gemeldet, was ihr Gerät hält.</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Kiln computes on the CPU (%1): the weights stay in host memory, so there is nothing to place.</source>
        <translation>Kiln rechnet auf der CPU (%1): Die Gewichte bleiben im Hauptspeicher, es gibt nichts zu verteilen.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The engine is moving weights on %1 just now; the map follows in a moment.</source>
        <translation>Die Engine verschiebt gerade Gewichte auf %1; die Übersicht folgt gleich.</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No model is loaded on %1. The map shows each model here once a render has loaded it.</source>
        <translation>Auf %1 ist kein Modell geladen. Die Übersicht zeigt jedes Modell hier, sobald ein Rendern es geladen hat.</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>%1 × %2, %3 frames</source>
        <translation>%1 × %2, %3 Bilder</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 at %2</source>
        <translation>%1 bei %2</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Resident weights</source>
        <translation>Residente Gewichte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Largest streamed group</source>
        <translation>Größte gestreamte Gruppe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Working memory</source>
        <translation>Arbeitsspeicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Working reserve</source>
        <translation>Arbeitsreserve</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2 resident weights, %3 largest streamed group, %4 working memory, %5 working reserve</source>
        <translation>%1: %2 residente Gewichte, %3 größte gestreamte Gruppe, %4 Arbeitsspeicher, %5 Arbeitsreserve</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1; %2 left of %3</source>
        <translation>%1; %2 frei von %3</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1; %2 too little: Kiln may use %3</source>
        <translation>%1; %2 zu wenig: Kiln darf %3 nutzen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Pinned</source>
        <translation>Gepinnt</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Host memory: %1 of weights, %2 of them pinned (the settings allow %3 pinned)</source>
        <translation>Hauptspeicher: %1 Gewichte, davon %2 gepinnt (die Einstellungen erlauben %3 gepinnt)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Host memory: %1 of weights (this device has no pinned memory)</source>
        <translation>Hauptspeicher: %1 Gewichte (dieses Gerät hat keinen gepinnten Speicher)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 (%2, %3): %4</source>
        <translation>%1 (%2, %3): %4</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 resident</source>
        <translation>%1 resident</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>up to %1 streamed</source>
        <translation>bis zu %1 gestreamt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 pinned</source>
        <translation>%1 gepinnt</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Does not fit: %1</source>
        <translation>Passt nicht: %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MemoryPanel</name>
    <message>
        <location filename="../ui/memory_panel.cpp" line="+40"/>
        <source>What</source>
        <translation>Was</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not known yet</source>
        <translation>noch unbekannt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Device memory in use</source>
        <translation>Belegter Gerätespeicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 of %2 (peak %3)</source>
        <translation>%1 von %2 (Spitze %3)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Reserved by the allocator</source>
        <translation>Vom Allokator reserviert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (%2 of it cached for reuse)</source>
        <translation>%1 (davon %2 zur Wiederverwendung vorgehalten)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Pinned host memory</source>
        <translation>Gepinnter Hostspeicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (peak %2)</source>
        <translation>%1 (Spitze %2)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Loaded models: %1</source>
        <translation>Geladene Modelle: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1, %2 on the device</source>
        <translation>%1, davon %2 auf dem Gerät</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Running job</source>
        <translation>Laufender Auftrag</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cached node results</source>
        <translation>Zwischengespeicherte Knotenergebnisse</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 in %2 entries</source>
        <translation>%1 in %2 Einträgen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kiln&apos;s resident memory</source>
        <translation>Speicher von Kiln (resident)</translation>
    </message>
</context>
<context>
    <name>kiln::ui::NodeCanvas</name>
    <message>
        <location filename="../ui/node_canvas.cpp" line="+72"/>
        <source>on</source>
        <translation>an</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>starter model</source>
        <translation>Startmodell</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>(required)</source>
        <translation>(erforderlich)</translation>
    </message>
    <message>
        <location line="+261"/>
        <location line="+58"/>
        <source>Group</source>
        <translation>Gruppe</translation>
    </message>
    <message>
        <location line="+323"/>
        <source>Rename Group…</source>
        <translation>Gruppe umbenennen …</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+8"/>
        <source>Group Colour</source>
        <translation>Gruppenfarbe</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>Theme</source>
        <translation>Design</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Red</source>
        <translation>Rot</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Orange</source>
        <translation>Orange</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Green</source>
        <translation>Grün</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Blue</source>
        <translation>Blau</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Purple</source>
        <translation>Violett</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Other…</source>
        <translation>Andere …</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Ungroup</source>
        <translation>Gruppierung aufheben</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Group Selection</source>
        <translation>Auswahl gruppieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ctrl+G</source>
        <translation>Ctrl+G</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Search…</source>
        <translation>Suchen…</translation>
    </message>
</context>
<context>
    <name>kiln::ui::NodeSearch</name>
    <message>
        <location filename="../ui/node_search.cpp" line="+19"/>
        <source>Search nodes</source>
        <translation>Knoten suchen</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>%1  (%2)</source>
        <translation>%1  (%2)</translation>
    </message>
</context>
<context>
    <name>kiln::ui::ParameterPanel</name>
    <message>
        <location filename="../ui/parameter_panel.cpp" line="+79"/>
        <location line="+37"/>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <location line="-12"/>
        <location line="+194"/>
        <source>Kiln starter model</source>
        <translation>Kiln-Startermodell</translation>
    </message>
    <message>
        <location line="-183"/>
        <source>%1 (not a checkpoint)</source>
        <translation>%1 (kein Checkpoint)</translation>
    </message>
    <message>
        <location line="+85"/>
        <location line="+61"/>
        <location line="+40"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location line="-97"/>
        <source>Open checkpoint</source>
        <translation>Checkpoint öffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoints (*.safetensors)</source>
        <translation>Checkpoints (*.safetensors)</translation>
    </message>
    <message>
        <location line="+60"/>
        <source>Choose a file</source>
        <translation>Datei wählen</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>From %1 to %2</source>
        <translation>Von %1 bis %2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>What to avoid</source>
        <translation>Was vermieden werden soll</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What to render</source>
        <translation>Was gezeigt werden soll</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Random</source>
        <translation>Zufällig</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A new seed for every Generate; untick to keep the seed</source>
        <translation>Bei jedem Erzeugen ein neuer Seed; abwählen, um den Seed zu behalten</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>A .safetensors checkpoint or a diffusers folder</source>
        <translation>Ein .safetensors-Checkpoint oder ein diffusers-Ordner</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>This workflow exposes no parameters: Generate runs it as it is.</source>
        <translation>Dieser Workflow legt keine Parameter offen: Erzeugen führt ihn so aus, wie er ist.</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PreferencesDialog</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+128"/>
        <source>Preferences</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>General</source>
        <translation>Allgemein</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Preset</source>
        <translation>Vorgabe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory map: what these settings put where, before Apply</source>
        <translation>Speicherübersicht: was diese Einstellungen wohin legen, vor dem Übernehmen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fill in</source>
        <translation>Übernehmen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Sets the memory settings below to the preset&apos;s; Apply or OK stores them</source>
        <translation>Setzt die Speichereinstellungen unten auf die der Vorgabe; Anwenden oder OK speichert sie</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Custom (your own values)</source>
        <translation>Eigene Werte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The values below match no preset</source>
        <translation>Die Werte unten entsprechen keiner Vorgabe</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>This build of Kiln has no GPU support (its libtorch is CPU-only): cpu, or sim:SIZE to simulate a device</source>
        <translation>Dieser Kiln-Build unterstützt keine GPU (seine libtorch rechnet nur auf der CPU): cpu, oder sim:GRÖSSE, um ein Gerät zu simulieren</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPUs this build can use: %1</source>
        <translation>GPUs, die dieser Build nutzen kann: %1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Takes effect when Kiln starts again (now: %1)</source>
        <translation>Wirkt beim nächsten Start von Kiln (jetzt: %1)</translation>
    </message>
    <message>
        <location line="+139"/>
        <source>Record stream needs streams: turn on streams or turn off record stream</source>
        <translation>Record Stream braucht Streams: Streams einschalten oder Record Stream ausschalten</translation>
    </message>
</context>
<context>
    <name>kiln::ui::QueuePanel</name>
    <message>
        <location filename="../ui/queue_panel.cpp" line="+38"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remove the selected request, or stop it if it is running</source>
        <translation>Den gewählten Auftrag entfernen oder, wenn er läuft, abbrechen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel all</source>
        <translation>Alle abbrechen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the running request and remove every waiting one</source>
        <translation>Den laufenden Auftrag abbrechen und alle wartenden entfernen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Up</source>
        <translation>Nach oben</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the selected request sooner</source>
        <translation>Den gewählten Auftrag früher ausführen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Down</source>
        <translation>Nach unten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the selected request later</source>
        <translation>Den gewählten Auftrag später ausführen</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Running: %1</source>
        <translation>Läuft: %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::SeedField</name>
    <message>
        <location filename="../ui/number_fields.cpp" line="+88"/>
        <source>%1: set to %2</source>
        <translation>%1: auf %2 gesetzt</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 is above the most, %2</source>
        <translation>%1 liegt über dem Höchstwert %2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::StageProgressBar</name>
    <message>
        <location filename="../ui/stage_progress_bar.cpp" line="+19"/>
        <source>Progress</source>
        <translation>Fortschritt</translation>
    </message>
    <message>
        <location line="+74"/>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
</context>
<context>
    <name>kiln::ui::WorkflowEditor</name>
    <message>
        <location filename="../ui/workflow_editor.cpp" line="+92"/>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Failed: %1</source>
        <translation>Fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>%1 %2 · %3%</source>
        <translation>%1 %2 · %3 %</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;New</source>
        <translation>&amp;Neu</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Open…</source>
        <translation>Ö&amp;ffnen…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open workflow</source>
        <translation>Workflow öffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Workflows and pictures (*.json *.png)</source>
        <translation>Workflows und Bilder (*.json *.png)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Save</source>
        <translation>&amp;Speichern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save &amp;As…</source>
        <translation>Speichern &amp;unter…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Use in &amp;Generate Panel</source>
        <translation>In der &amp;Erzeugen-Leiste verwenden</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Edit</source>
        <translation>&amp;Bearbeiten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Undo</source>
        <translation>&amp;Rückgängig</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Redo</source>
        <translation>&amp;Wiederholen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Copy</source>
        <translation>&amp;Kopieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Paste</source>
        <translation>&amp;Einfügen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Delete</source>
        <translation>&amp;Löschen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Group Selection</source>
        <translation>Auswahl &amp;gruppieren</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>U&amp;ngroup</source>
        <translation>Gruppierung auf&amp;heben</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Frame All</source>
        <translation>&amp;Alles zeigen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Workflow</source>
        <translation>&amp;Workflow</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Run</source>
        <translation>&amp;Ausführen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Interrupt</source>
        <translation>A&amp;bbrechen</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Untitled workflow</source>
        <translation>Unbenannter Workflow</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1%2 — Kiln workflow editor</source>
        <translation>%1%2 — Kiln-Workflow-Editor</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Select a node to edit its parameters.</source>
        <translation>Einen Knoten wählen, um seine Parameter zu bearbeiten.</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n nodes selected</source>
        <translation>
            <numerusform>%n Knoten gewählt</numerusform>
            <numerusform>%n Knoten gewählt</numerusform>
        </translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Show %1 in the generate panel</source>
        <translation>%1 in der Erzeugen-Leiste zeigen</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Cannot open %1: %2</source>
        <translation>%1 kann nicht geöffnet werden: %2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Opened %1</source>
        <translation>%1 geöffnet</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Save workflow</source>
        <translation>Workflow speichern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kiln workflows (*.json)</source>
        <translation>Kiln-Workflows (*.json)</translation>
    </message>
    <message>
        <location line="+3"/>
        <location line="+10"/>
        <source>Saving failed</source>
        <translation>Speichern fehlgeschlagen</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>The workflow cannot run: %1</source>
        <translation>Der Workflow kann nicht laufen: %1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Queued</source>
        <translation>Eingereiht</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Unsaved changes</source>
        <translation>Ungespeicherte Änderungen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Save the changes to this workflow?</source>
        <translation>Die Änderungen an diesem Workflow speichern?</translation>
    </message>
</context>
</TS>
