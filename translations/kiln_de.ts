<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>kiln::app::EngineBridge</name>
    <message>
        <location filename="../app/bridge/engine_bridge.cpp" line="79"/>
        <source>There is no image to save yet.</source>
        <translation>Es gibt noch kein Bild zum Speichern.</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="28"/>
        <source>Kiln</source>
        <translation>Kiln</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="33"/>
        <source>A .safetensors checkpoint or a diffusers folder</source>
        <translation>Ein .safetensors-Checkpoint oder ein Diffusers-Ordner</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="34"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="37"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="39"/>
        <source>What to render</source>
        <translation>Was gerendert werden soll</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="41"/>
        <source>What to avoid</source>
        <translation>Was vermieden werden soll</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="44"/>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="45"/>
        <source>Negative prompt</source>
        <translation>Negativer Prompt</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="60"/>
        <source>Model&apos;s native size</source>
        <translation>Native Größe des Modells</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="61"/>
        <source>0: the size the model was trained at</source>
        <translation>0: die Größe, mit der das Modell trainiert wurde</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="63"/>
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="64"/>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="65"/>
        <source>CFG scale</source>
        <translation>CFG-Skala</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="66"/>
        <source>Width</source>
        <translation>Breite</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="67"/>
        <source>Height</source>
        <translation>Höhe</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="68"/>
        <source>Generate</source>
        <translation>Generieren</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="69"/>
        <source>Render with these settings (Ctrl+Enter)</source>
        <translation>Mit diesen Einstellungen rendern (Strg+Eingabe)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="70"/>
        <source>Save As…</source>
        <translation>Speichern unter…</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="82"/>
        <source>Idle</source>
        <translation>Bereit</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="125"/>
        <source>The starter model is missing (%1). Choose a model.</source>
        <translation>Das Startmodell fehlt (%1). Wählen Sie ein Modell.</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="140"/>
        <source>Open checkpoint</source>
        <translation>Checkpoint öffnen</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="141"/>
        <source>Checkpoints (*.safetensors)</source>
        <translation>Checkpoints (*.safetensors)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="148"/>
        <source>Choose a model first: a .safetensors checkpoint or a diffusers folder.</source>
        <translation>Wählen Sie zuerst ein Modell: einen .safetensors-Checkpoint oder einen Diffusers-Ordner.</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="161"/>
        <source>Set both width and height, or both to the model&apos;s native size.</source>
        <translation>Setzen Sie Breite und Höhe, oder beide auf die native Größe des Modells.</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="165"/>
        <source>Starting…</source>
        <translation>Starte…</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="171"/>
        <source>Save image</source>
        <translation>Bild speichern</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="171"/>
        <source>PNG images (*.png)</source>
        <translation>PNG-Bilder (*.png)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="174"/>
        <source>Saving failed</source>
        <translation>Speichern fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="180"/>
        <source>%1 %2/%3</source>
        <translation>%1 %2/%3</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="187"/>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="187"/>
        <source>Done. Note: %1</source>
        <translation>Fertig. Hinweis: %1</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="194"/>
        <source>Failed: %1</source>
        <translation>Fehlgeschlagen: %1</translation>
    </message>
</context>
</TS>
