<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+45"/>
        <source>One per line</source>
        <translation>Eins pro Zeile</translation>
    </message>
</context>
<context>
    <name>kiln::app</name>
    <message>
        <location filename="../app/settings/settings.cpp" line="+34"/>
        <source>Folders searched for checkpoints, LoRAs and VAEs, including ComfyUI and A1111 model trees</source>
        <translation>Ordner, in denen Checkpoints, LoRAs und VAEs gesucht werden, auch Modellordner von ComfyUI und A1111</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where results are saved</source>
        <translation>Wo Ergebnisse gespeichert werden</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Names of saved files: {date}, {time}, {seed}, {model} are filled in</source>
        <translation>Namen gespeicherter Dateien: {date}, {time}, {seed}, {model} werden eingesetzt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where to compute: cpu, cuda:N</source>
        <translation>Wo gerechnet wird: cpu, cuda:N</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How weights move between host and device memory</source>
        <translation>Wie Gewichte zwischen Host- und Gerätespeicher wandern</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Offload mode of the text encoders</source>
        <translation>Auslagerungsmodus der Text-Encoder</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Offload mode of the UNet</source>
        <translation>Auslagerungsmodus des UNet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offload mode of the VAE</source>
        <translation>Auslagerungsmodus des VAE</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Blocks moved together in group-block mode</source>
        <translation>Im Modus group-block gemeinsam verschobene Blöcke</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Prefetch the next group while the current one runs</source>
        <translation>Die nächste Gruppe laden, während die aktuelle läuft</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Record tensors on the side stream (needs streams)</source>
        <translation>Tensoren auf dem Nebenstream vermerken (braucht Streams)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offloaded weights in pinned host memory</source>
        <translation>Ausgelagerte Gewichte in gepinntem Hostspeicher</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Host memory pinning leaves free</source>
        <translation>Hostspeicher, den das Pinnen frei lässt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Components never offloaded</source>
        <translation>Nie ausgelagerte Komponenten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Components always offloaded</source>
        <translation>Immer ausgelagerte Komponenten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VAE decode and encode in tiles</source>
        <translation>VAE-Dekodierung und -Kodierung in Kacheln</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>VAE tile size in pixels (0: the largest that fits)</source>
        <translation>VAE-Kachelgröße in Pixeln (0: die größte, die passt)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Overlap of VAE tiles in pixels</source>
        <translation>Überlappung der VAE-Kacheln in Pixeln</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Device memory kept free for work beside the weights</source>
        <translation>Gerätespeicher, der neben den Gewichten für die Arbeit frei bleibt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How LoRAs reach the weights</source>
        <translation>Wie LoRAs auf die Gewichte wirken</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Language of the interface (takes effect when Kiln starts)</source>
        <translation>Sprache der Oberfläche (wirkt beim nächsten Start von Kiln)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Colour theme</source>
        <translation>Farbschema</translation>
    </message>
</context>
<context>
    <name>kiln::app::EngineBridge</name>
    <message>
        <location filename="../app/bridge/engine_bridge.cpp" line="+109"/>
        <source>There is no image to save yet.</source>
        <translation>Es gibt noch kein Bild zum Speichern.</translation>
    </message>
</context>
<context>
    <name>kiln::app::Settings</name>
    <message>
        <location filename="../app/settings/settings.cpp" line="+20"/>
        <source>%1 must be true or false</source>
        <translation>%1 muss true oder false sein</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must be a whole number, not &apos;%2&apos;</source>
        <translation>%1 muss eine ganze Zahl sein, nicht &apos;%2&apos;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 must be between %2 and %3, not %4</source>
        <translation>%1 muss zwischen %2 und %3 liegen, nicht %4</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 must be a size like 2G or 512MiB, not &apos;%2&apos;</source>
        <translation>%1 muss eine Größe wie 2G oder 512MiB sein, nicht &apos;%2&apos;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 must be between %2 and %3</source>
        <translation>%1 muss zwischen %2 und %3 liegen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 must be one of %2, not &apos;%3&apos;</source>
        <translation>%1 muss eins von %2 sein, nicht &apos;%3&apos;</translation>
    </message>
    <message>
        <location line="+5"/>
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
        <source>%1 has an unknown type</source>
        <translation>%1 hat einen unbekannten Typ</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Kiln has no setting %1</source>
        <translation>Kiln hat keine Einstellung %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="+38"/>
        <source>Kiln</source>
        <translation>Kiln</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>A .safetensors checkpoint or a diffusers folder</source>
        <translation>Ein .safetensors-Checkpoint oder ein Diffusers-Ordner</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>What to render</source>
        <translation>Was gerendert werden soll</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>What to avoid</source>
        <translation>Was vermieden werden soll</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Negative prompt</source>
        <translation>Negativer Prompt</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Model&apos;s native size</source>
        <translation>Native Größe des Modells</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>0: the size the model was trained at</source>
        <translation>0: die Größe, mit der das Modell trainiert wurde</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CFG scale</source>
        <translation>CFG-Skala</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Width</source>
        <translation>Breite</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Height</source>
        <translation>Höhe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Generate</source>
        <translation>Generieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Render with these settings (Ctrl+Enter)</source>
        <translation>Mit diesen Einstellungen rendern (Strg+Eingabe)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save As…</source>
        <translation>Speichern unter…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Stop</source>
        <translation>Anhalten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Interrupt the render (Esc)</source>
        <translation>Das Rendern unterbrechen (Esc)</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Idle</source>
        <translation>Bereit</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Memory settings ignored: %1</source>
        <translation>Speichereinstellungen ignoriert: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Edit</source>
        <translation>&amp;Bearbeiten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Preferences…</source>
        <translation>&amp;Einstellungen…</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>The starter model is missing (%1). Choose a model.</source>
        <translation>Das Startmodell fehlt (%1). Wählen Sie ein Modell.</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Open checkpoint</source>
        <translation>Checkpoint öffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoints (*.safetensors)</source>
        <translation>Checkpoints (*.safetensors)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Choose a model first: a .safetensors checkpoint or a diffusers folder.</source>
        <translation>Wählen Sie zuerst ein Modell: einen .safetensors-Checkpoint oder einen Diffusers-Ordner.</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Set both width and height, or both to the model&apos;s native size.</source>
        <translation>Setzen Sie Breite und Höhe, oder beide auf die native Größe des Modells.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Starting…</source>
        <translation>Starte…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Save image</source>
        <translation>Bild speichern</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>PNG images (*.png)</source>
        <translation>PNG-Bilder (*.png)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Saving failed</source>
        <translation>Speichern fehlgeschlagen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 %2/%3 %4</source>
        <translation>%1 %2/%3 %4</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> · %1%</source>
        <translation> · %1 %</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> · about %1 s left</source>
        <translation> · noch etwa %1 s</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
    <message>
        <source>%1 %2/%3</source>
        <translation type="vanished">%1 %2/%3</translation>
    </message>
    <message>
        <location line="-16"/>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Done. Note: %1</source>
        <translation>Fertig. Hinweis: %1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Failed: %1</source>
        <translation>Fehlgeschlagen: %1</translation>
    </message>
</context>
<context>
    <name>kiln::ui::PreferencesDialog</name>
    <message>
        <location filename="../ui/preferences_dialog.cpp" line="+12"/>
        <source>Preferences</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>General</source>
        <translation>Allgemein</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <location line="+63"/>
        <source>Record stream needs streams: turn on streams or turn off record stream</source>
        <translation>Record Stream braucht Streams: Streams einschalten oder Record Stream ausschalten</translation>
    </message>
</context>
<context>
    <name>kiln::ui::StageProgressBar</name>
    <message>
        <location filename="../ui/stage_progress_bar.cpp" line="+17"/>
        <source>Progress</source>
        <translation>Fortschritt</translation>
    </message>
    <message>
        <location line="+71"/>
        <source>%1 %2/%3 %4</source>
        <translation>%1 %2/%3 %4</translation>
    </message>
</context>
</TS>
